// @custody/client: the TypeScript client of custody's HTTP API, on fetch alone.
export { CustodyClient } from './client.js';
export type { ClientOptions, CallOptions, ReadOptions, RememberInput, ListFilter, PageOptions, SearchInput, SearchMode, SearchResult, GateOptions, NamespaceFilter } from './client.js';
export { Session } from './harness.js';
export type { ToolOptions, ToolArgs, CallExtras } from './harness.js';
export * from './errors.js';
export type * from './types.js';
export type { components, paths } from './openapi.js';
