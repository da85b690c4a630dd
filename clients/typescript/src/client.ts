// The HTTP client: one method per route of custody's API (design §6),
// on nothing but the platform's fetch.

import { CustodyError, errorFrom } from './errors.js';
import { Session } from './harness.js';
import type {
  ConsistencyProof, Decision, Edge, ErasureReceipt, GateDecision, Impact, InclusionProof, Lineage, LogEntry, LogStatus,
  MemoryClass, MemoryRecord, Page, Pause, PauseRequest, Policy, PolicyChange, PrincipalInfo, PrincipalUpdate,
  ReviewItem, Rotated, ScoredRecord, SessionInfo,
} from './types.js';

export interface ClientOptions {
  /** The server, e.g. http://127.0.0.1:8080. */
  baseUrl: string;
  /** A principal's token, from `custody principal add`. */
  token: string;
  /** The user to act for; an agent principal must name it, a user principal may leave it out. */
  subject?: string;
  /** A fetch to use instead of the global one. */
  fetch?: typeof fetch;
  /**
   * How many times a request answered 429 is sent again, each after the
   * Retry-After the server gave (at most 30 seconds). custody answers 429
   * when the principal is over its rate, before it does anything with the
   * request, so sending it again is safe. Default 2; 0 throws
   * RateLimitedError at the first 429.
   */
  rateLimitRetries?: number;
}

/** The longest a rate-limited request waits before it is sent again. */
const MAX_RETRY_WAIT_MS = 30_000;

/** How long to wait before sending again a request answered 429 with this Retry-After (seconds; 1 when absent or unreadable). */
function retryWaitMs(retryAfter: string | null): number {
  const s = Number(retryAfter);
  if (retryAfter === null || retryAfter.trim() === '' || !Number.isFinite(s) || s < 0) return 1000;
  return Math.min(s * 1000, MAX_RETRY_WAIT_MS);
}

/** Options every call takes. */
export interface CallOptions {
  subject?: string;
}

/** A read in a session the caller opened: what it returned is recorded for the impact of a later repair. */
export interface ReadOptions extends CallOptions {
  session?: string;
}

export interface RememberInput extends CallOptions {
  namespace: string;
  body: string;
  class: MemoryClass;
  channel: string;
  key?: string;
  audience?: string;
  expires_at?: string;
  session?: string;
  derived_from?: Edge[];
  source_ref?: string;
  /** Optional plain data kept with the record (string values; never a control field). */
  metadata?: Record<string, string>;
}

/** Filters of list and search beyond namespace and class. */
export interface RecordFilters {
  /** Only keyed records whose key starts with this (payee.: payee.iban, payee.name); not with key. */
  keyPrefix?: string;
  /** Only records created strictly after this RFC 3339 time. */
  createdAfter?: string;
  /** Only records created strictly before this RFC 3339 time. */
  createdBefore?: string;
  /** Only records whose metadata has every one of these keys with exactly this value. */
  metadata?: Record<string, string>;
}

export interface ListFilter extends ReadOptions, RecordFilters {
  namespace?: string;
  /** Only this namespace and those below it (work: work, work/notes; not workshop); not with namespace. */
  namespacePrefix?: string;
  key?: string;
  class?: MemoryClass;
}

export interface PageOptions extends CallOptions {
  limit?: number;
  cursor?: string;
}

export interface SearchInput extends ReadOptions, RecordFilters {
  query: string;
  namespace?: string;
  /** Only this namespace and those below it; not with namespace. */
  namespacePrefix?: string;
  class?: MemoryClass;
  limit?: number;
  /** lexical (words), semantic (meaning) or hybrid (both); default hybrid when the server has an embedder. */
  mode?: SearchMode;
}

export type SearchMode = 'lexical' | 'semantic' | 'hybrid';

/** A ranked search: the items, the mode that ranked them, and why a semantic or hybrid search was answered lexically. */
export interface SearchResult {
  items: ScoredRecord[];
  mode: SearchMode;
  fallback?: string;
}

export interface GateOptions extends CallOptions {
  session?: string;
}

export interface NamespaceFilter extends CallOptions {
  /** Only this namespace and those below it (work: work, work/notes; not workshop). */
  prefix?: string;
}

type Query = Record<string, string | number | boolean | undefined>;

export class CustodyClient {
  readonly baseUrl: string;
  readonly subject?: string;
  private readonly token: string;
  private readonly doFetch: typeof fetch;
  private readonly rateLimitRetries: number;

  constructor(opts: ClientOptions) {
    this.baseUrl = opts.baseUrl.replace(/\/+$/, '');
    this.token = opts.token;
    this.subject = opts.subject;
    this.doFetch = opts.fetch ?? fetch;
    this.rateLimitRetries = Math.max(0, Math.floor(opts.rateLimitRetries ?? 2));
  }

  private async request<T>(method: string, path: string, query: Query = {}, body?: object, text?: string, auth = true): Promise<T> {
    const url = new URL(this.baseUrl + path);
    for (const [k, v] of Object.entries(query)) {
      if (v !== undefined && v !== '') url.searchParams.set(k, String(v));
    }
    const headers: Record<string, string> = { Accept: 'application/json' };
    if (auth) headers.Authorization = `Bearer ${this.token}`;
    let payload: string | undefined;
    if (text !== undefined) {
      payload = text;
      headers['Content-Type'] = 'text/plain; charset=utf-8';
    } else if (body !== undefined) {
      payload = JSON.stringify(Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined)));
      headers['Content-Type'] = 'application/json';
    }
    let resp: Response;
    for (let attempt = 0; ; attempt++) {
      try {
        resp = await this.doFetch(url, { method, headers, body: payload });
      } catch (e) {
        throw new CustodyError(0, 'unreachable', `cannot reach ${this.baseUrl}: ${(e as Error).message}; is custody serve running?`);
      }
      if (resp.status !== 429 || attempt >= this.rateLimitRetries) break;
      await resp.arrayBuffer(); // the answer is read, so the connection is reused
      await new Promise((ok) => setTimeout(ok, retryWaitMs(resp.headers.get('Retry-After'))));
    }
    const raw = await resp.text();
    if (!resp.ok) {
      let decoded: unknown = null;
      try {
        decoded = JSON.parse(raw);
      } catch {
        // not JSON: errorFrom says so
      }
      throw errorFrom(resp.status, decoded, resp.headers.get('Retry-After'));
    }
    const type = resp.headers.get('Content-Type') ?? '';
    return (type.startsWith('application/json') ? JSON.parse(raw) : raw) as T;
  }

  private sub(o?: CallOptions): string | undefined {
    return o?.subject ?? this.subject;
  }

  private p(id: string): string {
    return encodeURIComponent(id);
  }

  // -- memories ----------------------------------------------------------

  /** Submit a candidate; the answer says whether it was admitted or held. */
  remember(input: RememberInput): Promise<Decision> {
    return this.request('POST', '/v1/memories', {}, { ...input, subject: this.sub(input) });
  }

  /**
   * Submit up to 1000 candidates in one transaction (POST /v1/memories/batch):
   * one decision per item, in order. An invalid item fails the whole batch.
   */
  async rememberBatch(items: Omit<RememberInput, 'subject'>[], o?: CallOptions): Promise<Decision[]> {
    const d = await this.request<{ items: Decision[] | null }>('POST', '/v1/memories/batch', {}, { subject: this.sub(o), items });
    return d.items ?? [];
  }

  get(id: string, o?: ReadOptions): Promise<MemoryRecord> {
    return this.request('GET', `/v1/memories/${this.p(id)}`, { subject: this.sub(o), session: o?.session });
  }

  /** One page of eligible records, newest version per key. */
  async list(f: ListFilter & PageOptions = {}): Promise<Page<MemoryRecord>> {
    const q: Query = {
      namespace: f.namespace, namespace_prefix: f.namespacePrefix, key: f.key, class: f.class, limit: f.limit, cursor: f.cursor, subject: this.sub(f),
      session: f.session, key_prefix: f.keyPrefix, created_after: f.createdAfter, created_before: f.createdBefore,
    };
    for (const [k, v] of Object.entries(f.metadata ?? {})) q[`metadata.${k}`] = v;
    const d = await this.request<{ items: MemoryRecord[] | null; next_cursor: string }>('GET', '/v1/memories', q);
    return { items: d.items ?? [], nextCursor: d.next_cursor ?? '' };
  }

  /** Every eligible record, following next_cursor page by page. */
  memories(f: ListFilter & { pageSize?: number } = {}): AsyncGenerator<MemoryRecord> {
    return pages((cursor) => this.list({ ...f, limit: f.pageSize, cursor }));
  }

  /** Eligible records ranked against plain text, best first, with score. */
  async search(input: SearchInput): Promise<ScoredRecord[]> {
    return (await this.searchRanked(input)).items;
  }

  /** search, with the mode that ranked the items and any fallback; each item's lists say which lists found it. */
  async searchRanked(input: SearchInput): Promise<SearchResult> {
    const { namespacePrefix, keyPrefix, createdAfter, createdBefore, ...rest } = input;
    const d = await this.request<{ items: ScoredRecord[] | null; mode: SearchMode; fallback?: string }>('POST', '/v1/search', {}, {
      ...rest, namespace_prefix: namespacePrefix, key_prefix: keyPrefix, created_after: createdAfter, created_before: createdBefore,
      subject: this.sub(input),
    });
    return { items: d.items ?? [], mode: d.mode, fallback: d.fallback || undefined };
  }

  async history(id: string, o?: CallOptions): Promise<MemoryRecord[]> {
    const d = await this.request<{ items: MemoryRecord[] | null }>('GET', `/v1/memories/${this.p(id)}/history`, { subject: this.sub(o) });
    return d.items ?? [];
  }

  lineage(id: string, o?: CallOptions): Promise<Lineage> {
    return this.request('GET', `/v1/memories/${this.p(id)}/lineage`, { subject: this.sub(o) });
  }

  /** What a record reached: descendants, sessions that read it, gate decisions that relied on it (reviewer or admin). */
  impact(id: string): Promise<Impact> {
    return this.request('GET', `/v1/memories/${this.p(id)}/impact`, {});
  }

  /** The owner confirms a pending_confirmation write. */
  confirm(id: string, o?: CallOptions): Promise<MemoryRecord> {
    return this.request('POST', `/v1/memories/${this.p(id)}/confirm`, {}, { subject: this.sub(o) });
  }

  /** The owner retires a memory of its own (DELETE /v1/memories/{id}); erase erases its body too. */
  async forget(id: string, o: CallOptions & { reason?: string; erase?: boolean } = {}): Promise<string[]> {
    return (await this.request<{ affected: string[] | null }>('DELETE', `/v1/memories/${this.p(id)}`,
      { erase: o.erase ? 'true' : undefined, reason: o.reason, subject: this.sub(o) })).affected ?? [];
  }

  /** Erase every memory body of a subject (admin, or the user itself), with a receipt. */
  eraseSubject(name: string, o: CallOptions & { reason?: string } = {}): Promise<ErasureReceipt> {
    return this.request('POST', `/v1/subjects/${this.p(name)}/erase`, {}, { reason: o.reason, subject: this.sub(o) });
  }

  /** One page of the namespaces holding a memory the subject may retrieve. */
  async listNamespaces(f: NamespaceFilter & PageOptions = {}): Promise<Page<string>> {
    const d = await this.request<{ items: string[] | null; next_cursor?: string }>('GET', '/v1/namespaces',
      { prefix: f.prefix, limit: f.limit, cursor: f.cursor, subject: this.sub(f) });
    return { items: d.items ?? [], nextCursor: d.next_cursor ?? '' };
  }

  /** Every such namespace, following next_cursor page by page. */
  namespaces(f: NamespaceFilter & { pageSize?: number } = {}): AsyncGenerator<string> {
    return pages((cursor) => this.listNamespaces({ ...f, limit: f.pageSize, cursor }));
  }

  // -- repair ------------------------------------------------------------

  async quarantine(id: string, o: CallOptions & { reason?: string } = {}): Promise<string[]> {
    return (await this.request<{ affected: string[] }>('POST', `/v1/memories/${this.p(id)}/quarantine`, {}, { reason: o.reason, subject: this.sub(o) })).affected;
  }

  async retire(id: string, o: CallOptions & { reason?: string; erase?: boolean } = {}): Promise<string[]> {
    return (await this.request<{ affected: string[] }>('POST', `/v1/memories/${this.p(id)}/retire`, {},
      { reason: o.reason, erase: o.erase || undefined, subject: this.sub(o) })).affected;
  }

  async rebuild(id: string, o: CallOptions & { body?: string } = {}): Promise<string[]> {
    return (await this.request<{ affected: string[] }>('POST', `/v1/memories/${this.p(id)}/rebuild`, {}, { body: o.body, subject: this.sub(o) })).affected;
  }

  // -- review ------------------------------------------------------------

  /** One page of the review queue; keyed items carry proposed {old, new}. */
  async review(o: PageOptions = {}): Promise<Page<ReviewItem>> {
    const d = await this.request<{ items: ReviewItem[] | null; next_cursor: string }>('GET', '/v1/review',
      { limit: o.limit, cursor: o.cursor, subject: this.sub(o) });
    return { items: d.items ?? [], nextCursor: d.next_cursor ?? '' };
  }

  /** The whole review queue, page by page. */
  reviewQueue(o: CallOptions & { pageSize?: number } = {}): AsyncGenerator<ReviewItem> {
    return pages((cursor) => this.review({ ...o, limit: o.pageSize, cursor }));
  }

  /** Admit a held candidate; reason is kept in the receipt and the log. */
  approve(id: string, o: CallOptions & { reason?: string } = {}): Promise<MemoryRecord> {
    return this.request('POST', `/v1/review/${this.p(id)}/approve`, {}, { reason: o.reason, subject: this.sub(o) });
  }

  reject(id: string, o: CallOptions & { reason?: string } = {}): Promise<MemoryRecord> {
    return this.request('POST', `/v1/review/${this.p(id)}/reject`, {}, { reason: o.reason, subject: this.sub(o) });
  }

  async reevaluate(o?: CallOptions): Promise<string[]> {
    return (await this.request<{ changed: string[] | null }>('POST', '/v1/review/reevaluate', {}, { subject: this.sub(o) })).changed ?? [];
  }

  // -- sessions and the gate ---------------------------------------------

  /** Open a session for the subject: a harness Session (see harness.ts). */
  async openSession(o?: CallOptions): Promise<Session> {
    const info = await this.request<SessionInfo>('POST', '/v1/sessions', {}, { subject: this.sub(o) });
    return new Session(this, info);
  }

  /** Record content that entered the model's context. */
  observe(session: string, channel: string, text: string, sourceRef?: string, o?: CallOptions): Promise<SessionInfo> {
    return this.request('POST', `/v1/sessions/${this.p(session)}/observations`, {},
      { channel, text, source_ref: sourceRef, subject: this.sub(o) });
  }

  /** Ask the action gate whether action may run with these arguments. */
  gate(action: string, args: Record<string, unknown> = {}, justification: string[] = [], o: GateOptions = {}): Promise<GateDecision> {
    return this.request('POST', '/v1/gate', {}, {
      action, args, justification: justification.length ? justification : undefined, session: o.session, subject: this.sub(o),
    });
  }

  /** The owner confirms this exact action once; returns its digest. */
  async confirmAction(action: string, args: Record<string, unknown> = {}, o?: CallOptions): Promise<string> {
    return (await this.request<{ digest: string }>('POST', '/v1/gate/confirm', {}, { action, args, subject: this.sub(o) })).digest;
  }

  // -- the audit log -----------------------------------------------------

  /** The signed checkpoint, C2SP signed-note text. */
  checkpoint(o?: CallOptions): Promise<string> {
    return this.request('GET', '/v1/log/checkpoint', { subject: this.sub(o) });
  }

  inclusionProof(index: number, size: number, o?: CallOptions): Promise<InclusionProof> {
    return this.request('GET', '/v1/log/proof/inclusion', { index, size, subject: this.sub(o) });
  }

  consistencyProof(from: number, to: number, o?: CallOptions): Promise<ConsistencyProof> {
    return this.request('GET', '/v1/log/proof/consistency', { from, to, subject: this.sub(o) });
  }

  /** Entries [start, end); one the caller may not read is {index, leaf_hash} alone. */
  async logEntries(start: number, end: number, o?: CallOptions): Promise<LogEntry[]> {
    return (await this.request<{ entries: LogEntry[] | null }>('GET', '/v1/log/entries', { start, end, subject: this.sub(o) })).entries ?? [];
  }

  /** Entries [start, end), fetched pageSize at a time. */
  async *allLogEntries(start: number, end: number, o: CallOptions & { pageSize?: number } = {}): AsyncGenerator<LogEntry> {
    const size = o.pageSize ?? 1000;
    while (start < end) {
      const entries = await this.logEntries(start, Math.min(end, start + size), o);
      if (entries.length === 0) return;
      yield* entries;
      start += entries.length;
    }
  }

  /**
   * The verifier key (C2SP signed-note vkey) of the checkpoints of tenant's log, each tenant's log
   * having its own origin; asked without the token.
   */
  async logKey(tenant: string): Promise<string> {
    return (await this.request<string>('GET', '/v1/log/key', { tenant }, undefined, undefined, false)).trim();
  }

  /** The caller's tenant's log: its signed checkpoint, size, origin, verifier key and last custody verify (null before any). */
  logStatus(o?: CallOptions): Promise<LogStatus> {
    return this.request('GET', '/v1/log/status', { subject: this.sub(o) });
  }

  // -- principals (admin) ------------------------------------------------

  async principals(o?: CallOptions): Promise<PrincipalInfo[]> {
    return (await this.request<{ items: PrincipalInfo[] | null }>('GET', '/v1/principals', { subject: this.sub(o) })).items ?? [];
  }

  principal(name: string, o?: CallOptions): Promise<PrincipalInfo> {
    return this.request('GET', `/v1/principals/${this.p(name)}`, { subject: this.sub(o) });
  }

  /** Replace a principal's roles, channels or groups (those given; the others stay). */
  updatePrincipal(name: string, change: PrincipalUpdate, o?: CallOptions): Promise<PrincipalInfo> {
    return this.request('PATCH', `/v1/principals/${this.p(name)}`, { subject: this.sub(o) }, change);
  }

  /** A new token for the principal; the old one is refused from now on. */
  rotatePrincipal(name: string, o: CallOptions & { reason?: string } = {}): Promise<Rotated> {
    return this.request('POST', `/v1/principals/${this.p(name)}/rotate`, { subject: this.sub(o) }, { reason: o.reason });
  }

  /** Revoke the principal: its token is refused from now on. */
  revokePrincipal(name: string, o: CallOptions & { reason?: string } = {}): Promise<PrincipalInfo> {
    return this.request('POST', `/v1/principals/${this.p(name)}/revoke`, { subject: this.sub(o) }, { reason: o.reason });
  }

  // -- pauses (admin or reviewer) ----------------------------------------

  /** Hold a writer's or a channel's candidates for review; for is a Go duration (90m), until RFC 3339. */
  pause(input: Omit<PauseRequest, 'subject'>, o?: CallOptions): Promise<Pause> {
    return this.request('POST', '/v1/pauses', {}, { ...input, subject: this.sub(o) });
  }

  /** The active pauses, or with all the resumed and ended ones too. */
  async pauses(o: CallOptions & { all?: boolean } = {}): Promise<Pause[]> {
    return (await this.request<{ items: Pause[] | null }>('GET', '/v1/pauses',
      { all: o.all ? 'true' : undefined, subject: this.sub(o) })).items ?? [];
  }

  /** End a pause; what it held stays quarantined for review. */
  resume(id: string, o?: CallOptions): Promise<Pause> {
    return this.request('DELETE', `/v1/pauses/${this.p(id)}`, { subject: this.sub(o) });
  }

  // -- policy and server -------------------------------------------------

  getPolicy(o?: CallOptions): Promise<Policy> {
    return this.request('GET', '/v1/policy', { subject: this.sub(o) });
  }

  /** Replace the tenant's policy; force installs one that fails its dry run. */
  putPolicy(text: string, o: CallOptions & { force?: boolean } = {}): Promise<PolicyChange> {
    return this.request('PUT', '/v1/policy', { force: o.force ? 'true' : undefined, subject: this.sub(o) }, { text });
  }

  health(): Promise<{ status: string }> {
    return this.request('GET', '/healthz');
  }

  openapi(): Promise<Record<string, unknown>> {
    return this.request('GET', '/v1/openapi.json');
  }
}

async function* pages<T>(fetchPage: (cursor?: string) => Promise<Page<T>>): AsyncGenerator<T> {
  let cursor: string | undefined;
  for (;;) {
    const page = await fetchPage(cursor);
    yield* page.items;
    if (!page.nextCursor) return;
    cursor = page.nextCursor;
  }
}
