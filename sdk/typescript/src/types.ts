// The request and response bodies of the service, with the field names
// they have on the wire (docs/api.md).

/** Modes of the assistant (ChatRequest.mode). */
export type Mode = "operator" | "customer" | "support" | "success";

/** Entity types of citation tokens. */
export type EntityType = "framework" | "paper" | "blog";

/** The body of POST /api/v1/chat. */
export interface ChatRequest {
  /** The user's message, 1 to 8000 characters after trimming. */
  message: string;
  /** Earlier turns, oldest first, at most 50. */
  history?: HistoryItem[] | undefined;
  /** The persona; "operator" when absent. */
  mode?: Mode | undefined;
  /** An optional vertical id of the catalog (saas, ecommerce...). */
  vertical?: string | undefined;
  /** Labels the calling integration; recorded with usage, never changes the answer. */
  source?: string | undefined;
}

/** An earlier turn of the conversation. */
export interface HistoryItem {
  role: "user" | "assistant";
  content: string;
}

/** One turn's answer; the final event of a stream carries the same object. */
export interface ChatResponse {
  /** Markdown with citation tokens such as [framework:theory-of-constraints]; findTokens lists them. */
  response: string;
  reasoning_trace: TraceItem[];
  rag_hits: RagHit[];
  confidence: Confidence;
}

/** One tool call the turn made, in order, hop from 0. */
export interface TraceItem {
  hop: number;
  tool: string;
  input_summary: string;
  result_summary: string;
}

/** One knowledge entity the answer cites, in order of first citation. */
export interface RagHit {
  title: string;
  /** The citation token, type:slug. */
  source: string;
  url: string | null;
  /** Retrieval relevance, 0 to 1. */
  score: number;
  snippet: string;
}

/** The verdict on a whole text: chat answers carry it and verify returns it. */
export interface Confidence {
  /** verifiedClaims / totalClaims; for a chat answer, the lower of that and relevance. */
  score: number;
  level: "high" | "medium" | "low" | "none";
  totalClaims: number;
  verifiedClaims: number;
  /** Chat answers only: how much of what was asked the verified claims address, 0 to 1. */
  relevance?: number | undefined;
  verdicts: Verdict[];
}

export type VerdictStatus = "verified" | "unsupported" | "contradicted";

/** The check of one claim. */
export interface Verdict {
  claim: string;
  status: VerdictStatus;
  /** Tokens type:slug the claim cites. */
  citations: string[];
  /** The passage that decided the verdict; null when none applies. */
  evidence: Evidence | null;
  score: number;
  reason: string;
  /** Set on unsupported verdicts only. */
  basis?: "no_evidence" | "insufficient" | undefined;
}

/**
 * The passage that decided a verdict, and where it is in the entity card
 * that resolve() returns for type and slug: `card[field]` (or the list item
 * `card.key_ideas[i]` for `"key_ideas[i]"`) sliced from start to end is the
 * quote, so `text.slice(e.start, e.end) === e.quote`.
 */
export interface Evidence {
  type: EntityType;
  slug: string;
  /** The passage cut to 280 bytes, or the work's metadata line ("Title" by A, published in Y). */
  snippet: string;
  /**
   * The card field, by its JSON name: "title", "summary", "year" (its decimal form),
   * "authors[i]", "tags[i]", "key_ideas[i]"; "when_to_use[i]" and "pitfalls[i]" are entity
   * fields the card does not carry. Empty only when a model judge's quote cannot be located.
   */
  field: string;
  /** Offset of the passage in the field's text, in UTF-16 code units (JavaScript string indices). */
  start: number;
  /** Offset of its end, excluded. */
  end: number;
  /** The field's text from start to end, exactly. */
  quote: string;
}

/** The body of POST /api/v1/verify. */
export interface VerifyRequest {
  /** Checked claim by claim, 1 to 8000 characters, with citation tokens written [type:slug]. */
  text: string;
  /** At most 100 tokens type:slug (no brackets) that claims citing nothing are checked against. */
  citations?: string[] | undefined;
  /** The score, 0 to 1, a claim must reach to be verified; the service's default when absent. */
  threshold?: number | undefined;
  /** Labels the calling integration. */
  source?: string | undefined;
}

/** The API key making the request (GET /api/v1/key). */
export interface KeyInfo {
  key_id: string;
  workspace: string;
  name: string;
  /** RFC 3339 time. */
  created_at: string;
  /** RFC 3339 time; null when the key does not expire. */
  expires_at: string | null;
}

/** Counts of the entities the assistant can cite. */
export interface KnowledgeStats {
  total: number;
  frameworks: number;
  papers: number;
  blogs: number;
}

/** A knowledge entity as a hover card. */
export interface EntityCard {
  type: EntityType;
  slug: string;
  /** type:slug */
  token: string;
  title: string;
  summary: string;
  url: string | null;
  year: number | null;
  authors: string[];
  tags: string[];
  archetypes: string[];
  key_ideas: string[];
  /** Situations the entity fits, in the words of someone in them. */
  when_to_use: string[];
  /** Common mistakes when applying it. */
  pitfalls: string[];
  related: string[];
  /** How the catalog applies the framework to each constraint archetype it serves (empty for other entities). */
  applications: CardApplication[];
}

/** The catalog's application of a framework to one constraint archetype. */
export interface CardApplication {
  archetype: string;
  text: string;
  first_steps: string[];
}

/** A citation token: written [type:slug] in answers, type:slug in lists. */
export interface Token {
  type: EntityType;
  /** [a-z0-9_-]+ */
  slug: string;
}

/** The answer of resolve (and resolveAll): both lists in request order, each token once. */
export interface ResolveResponse {
  resolved: EntityCard[];
  unresolved: UnresolvedToken[];
}

/** A token that did not resolve. */
export interface UnresolvedToken {
  type: string;
  slug: string;
  reason: "not_found" | "invalid";
}

/** The query of GET /api/assistant/v1/search. */
export interface SearchParams {
  /** Required, 1 to 500 characters. */
  q: string;
  type?: EntityType | undefined;
  /** 1 to 50; the service's default (10) when absent. */
  limit?: number | undefined;
}

/** The search results, best first. */
export interface SearchResponse {
  query: string;
  results: SearchResult[];
}

/** A card with its relevance, comparable within one response only. */
export interface SearchResult extends EntityCard {
  score: number;
}

/** The query of GET /api/assistant/v1/leaderboard; absent fields take the defaults (30 days, 10 entries). */
export interface LeaderboardParams {
  /** 1 to 365 */
  days?: number | undefined;
  /** 1 to 100 */
  limit?: number | undefined;
}

/** The most cited entities of a window. */
export interface Leaderboard {
  days: number;
  limit: number;
  /** RFC 3339, inclusive. */
  since: string;
  /** RFC 3339, exclusive. */
  until: string;
  entries: LeaderboardEntry[];
}

export interface LeaderboardEntry {
  rank: number;
  type: EntityType;
  slug: string;
  token: string;
  title: string;
  citations: number;
}

/** The body of POST /api/assistant/v1/preview: vertical and exactly one of archetype_id and free_text. */
export interface PreviewRequest {
  vertical: string;
  archetype_id?: string | undefined;
  free_text?: string | undefined;
}

/** The citation block the assistant would produce for a constraint archetype in a vertical. */
export interface Preview {
  vertical: PreviewItem;
  archetype: PreviewItem;
  match: PreviewMatch;
  framework_applications: FrameworkApplication[];
  citations: string[];
}

export interface PreviewItem {
  id: string;
  name: string;
  description?: string | undefined;
}

export interface PreviewMatch {
  method: "archetype_id" | "free_text";
  /** 1 for the structured form. */
  confidence: number;
  alternatives: PreviewAlternative[];
}

export interface PreviewAlternative {
  archetype_id: string;
  name: string;
  score: number;
}

export interface FrameworkApplication {
  rank: number;
  token: string;
  title: string;
  application: string;
  first_steps: string[];
  metrics: string[];
  supporting: string[];
}

/** The verticals and constraint archetypes, in catalog order. */
export interface Catalog {
  verticals: CatalogItem[];
  archetypes: CatalogItem[];
}

export interface CatalogItem {
  id: string;
  name: string;
  description: string;
}

/** An asynchronous turn's state (GET /api/v1/chat/turns/{id}). */
export interface Turn {
  id: string;
  state: "queued" | "running" | "succeeded" | "failed";
  submitted_at: string;
  completed_at?: string;
  /** The chat response object, once the turn succeeded. */
  response?: ChatResponse;
  /** The problem document of a failed turn. */
  error?: { type: string; title: string; status: number; detail: string; request_id?: string };
}
