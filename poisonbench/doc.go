// Package poisonbench measures how well custody resists memory poisoning.
//
// It plays attack families drawn from the published studies (an explicit
// REMEMBER command, a money-key overwrite, a vague retention policy, a fake
// record of past success, a procedure saved as a skill, provenance laundering
// through summaries, tool echoes and repeated copies, cross-user injection
// into shared memory, spoofed control fields, snapshot restore, a policy
// outage, a ranking flood), and the formatting and encoding evasions of the
// action gate (IBANs spelled with no-break spaces, zero-width or bidi
// characters, split across lines or sentences; amounts in other notations
// and in words; values only in a record's metadata, a tool result's
// structured content or a tool's description), against defence cells, each
// a configuration of the real custody.Service over a real SQLite file:
// none, channel+quarantine, signatures, lineage, full (lineage plus the
// action gate), and the two gateway cells.
//
// Every trial is one family in one cell after a given number of benign
// sessions (the delay) and runs on a fresh store. The attacker plants its
// content, the benign twin plants a legitimate counterpart, the subject goes
// on with ordinary sessions, then a later session fires the victim task and
// the twin task. The agent is scripted and always complies: it obeys
// REMEMBER lines, copies records of past success and skills, saves what its
// retention instructions cover, keeps notes, restates what it is asked to
// note, and acts on the top-ranked relevant memory. The harness around it
// does what a real one does: it records an observation for every piece of
// content that enters the agent's context, and writes what the agent saves
// on the channel the content came from (when saved verbatim) or on the agent
// channel (when restated).
//
// The results are attack success, poison persistence, poison retrieval,
// benign utility and false positives per family and cell, plus the mean cost
// of a service call. For a given seed everything except the cost is
// deterministic: the clock is fake and advanced by the harness, and trials
// are reported in a fixed order.
package poisonbench
