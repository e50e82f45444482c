import type { EntityType, Token } from "./types.js";

/** The most tokens one resolve request may carry. */
export const MAX_RESOLVE_BATCH = 100;

const TEXT_TOKEN = /\[(framework|paper|blog):([a-z0-9_-]+)\]/g;
const BARE_TOKEN = /^(framework|paper|blog):([a-z0-9_-]+)$/;

/** Returns type:slug. */
export function tokenString(t: Token): string {
  return `${t.type}:${t.slug}`;
}

/**
 * Returns the citation tokens written [type:slug] in text, in order of
 * first appearance, each once. Only the types framework, paper and blog
 * and slugs of [a-z0-9_-]+ count.
 */
export function findTokens(text: string): Token[] {
  const out: Token[] = [];
  const seen = new Set<string>();
  for (const m of text.matchAll(TEXT_TOKEN)) {
    const t: Token = { type: m[1] as EntityType, slug: m[2]! };
    const key = tokenString(t);
    if (!seen.has(key)) {
      seen.add(key);
      out.push(t);
    }
  }
  return out;
}

/** Reads a token written type:slug (brackets allowed); throws when it is not one. */
export function parseToken(s: string): Token {
  let v = s.trim();
  if (v.startsWith("[")) v = v.slice(1);
  if (v.endsWith("]")) v = v.slice(0, -1);
  const m = BARE_TOKEN.exec(v);
  if (!m) throw new Error(`assistant: ${JSON.stringify(s)} is not a citation token type:slug`);
  return { type: m[1] as EntityType, slug: m[2]! };
}

/** The tokens once each, in order of first appearance. */
export function dedupeTokens(tokens: Iterable<Token>): Token[] {
  const out: Token[] = [];
  const seen = new Set<string>();
  for (const t of tokens) {
    const key = tokenString(t);
    if (!seen.has(key)) {
      seen.add(key);
      out.push({ type: t.type, slug: t.slug });
    }
  }
  return out;
}
