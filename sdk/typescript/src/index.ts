// The TypeScript client of the assistant service: fetch-based, with no
// runtime dependencies. It mirrors the Go client in client/.
export * from "./client.js";
export * from "./errors.js";
export * from "./stream.js";
export * from "./tokens.js";
export * from "./webhook.js";
export type * from "./types.js";
