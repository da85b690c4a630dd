// Harness helpers: a session that records what the model saw, asks the gate
// before sensitive calls, and wraps tools so both happen around every call.
//
//   const session = await client.openSession();
//   const send = session.tool(sendMoney, { action: 'send_money' });
//   const read = session.tool(readEmail, { action: 'read_file', channel: 'tool:email' });
//
// A wrapped tool asks the gate with its call's arguments before it runs (and
// throws GateRefusedError instead of running when the gate does not allow
// it), then records its output as an observation of the session.

import type { CustodyClient, RememberInput, SearchInput } from './client.js';
import { GateRefusedError } from './errors.js';
import type { Decision, GateDecision, MemoryRecord, ScoredRecord, SessionInfo } from './types.js';

export type ToolArgs = Record<string, unknown>;

export interface ToolOptions<A extends ToolArgs> {
  /** The action the gate is asked about (default: the function's name). */
  action?: string;
  /** The observation's channel (default "tool:" + action). */
  channel?: string;
  /** Where the output came from: a string or a function of the call's arguments. */
  sourceRef?: string | ((args: A) => string);
  /** Ask the gate before each call (default true). */
  gate?: boolean;
  /** Record the output as an observation (default true). */
  observe?: boolean;
  /** Ids of the memories that justify a call, from its arguments. */
  justify?: (args: A) => string[];
}

export interface CallExtras {
  /** Ids of the memories that justify this call. */
  justification?: string[];
}

export class Session {
  constructor(
    readonly client: CustodyClient,
    public info: SessionInfo,
  ) {}

  get id(): string {
    return this.info.id;
  }

  get subject(): string {
    return this.info.subject;
  }

  /** Record content that entered the model's context (e.g. channel "tool:email"). */
  async observe(channel: string, text: string, sourceRef?: string): Promise<SessionInfo> {
    this.info = await this.client.observe(this.id, channel, text, sourceRef, { subject: this.subject });
    return this.info;
  }

  /** A write from this session (agent channel by default): admission knows what the session observed. */
  remember(input: Omit<RememberInput, 'channel' | 'session'> & { channel?: string }): Promise<Decision> {
    return this.client.remember({ subject: this.subject, ...input, channel: input.channel ?? 'agent', session: this.id });
  }

  /** A search whose hits are recorded as read in this session. */
  search(input: Omit<SearchInput, 'session'>): Promise<ScoredRecord[]> {
    return this.client.search({ subject: this.subject, ...input, session: this.id });
  }

  /** A get recorded as read in this session. */
  get(id: string): Promise<MemoryRecord> {
    return this.client.get(id, { subject: this.subject, session: this.id });
  }

  /** Ask the gate about action in this session. */
  gate(action: string, args: ToolArgs = {}, justification: string[] = []): Promise<GateDecision> {
    return this.client.gate(action, args, justification, { session: this.id, subject: this.subject });
  }

  /** Wrap a tool taking one object of named arguments: gate each call, run it only when allowed, observe its output. */
  tool<A extends ToolArgs, R>(fn: (args: A) => R | Promise<R>, opts: ToolOptions<A> = {}): (args: A, extras?: CallExtras) => Promise<R> {
    const action = opts.action ?? fn.name;
    if (!action) throw new Error('session.tool: name the action (opts.action) of an anonymous function');
    const channel = opts.channel ?? `tool:${action}`;
    return async (args: A, extras: CallExtras = {}) => {
      if (opts.gate ?? true) {
        const ids = [...(extras.justification ?? []), ...(opts.justify?.(args) ?? [])];
        const decision = await this.gate(action, args, ids);
        if (decision.decision !== 'allow') throw new GateRefusedError(action, decision);
      }
      const out = await fn(args);
      if ((opts.observe ?? true) && out !== undefined && out !== null) {
        const ref = typeof opts.sourceRef === 'function' ? opts.sourceRef(args) : opts.sourceRef ?? action;
        await this.observe(channel, typeof out === 'string' ? out : JSON.stringify(out), ref);
      }
      return out;
    };
  }
}
