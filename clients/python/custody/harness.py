"""Harness helpers: a session that records what the model saw, asks the gate
before sensitive calls, and wraps tools so both happen around every call.

    session = client.open_session("alice")
    send = session.tool(send_money, action="send_money")
    read = session.tool(read_email, action="read_file", channel="tool:email")

A wrapped tool asks the gate with its call's arguments before it runs (and
raises GateRefused instead of running when the gate does not allow it), then
records its output as an observation of the session, so memories written
later in the session, and later gated calls, know what entered the context.
"""

from __future__ import annotations

import functools
import inspect
import json
from typing import Any, Callable, Dict, Optional, Sequence

from .errors import GateRefused
from .types import Decision, GateDecision, SessionInfo

JUSTIFICATION_KWARG = "custody_justification"


class Session:
    """An open session of a client, for one subject."""

    def __init__(self, client, info: SessionInfo):
        self.client = client
        self.info = info

    @property
    def id(self) -> str:
        return self.info.id

    @property
    def subject(self) -> str:
        return self.info.subject

    def observe(self, channel: str, text: str, source_ref: Optional[str] = None) -> SessionInfo:
        """Record content that entered the model's context (e.g. channel "tool:email")."""
        self.info = self.client.observe(self.id, channel, text, source_ref, subject=self.subject)
        return self.info

    def remember(self, namespace: str, body: str, class_: str = "fact", channel: str = "agent", **kw: Any) -> Decision:
        """A write from this session: admission knows what the session observed."""
        kw.setdefault("subject", self.subject)
        return self.client.remember(namespace, body, class_, channel, session=self.id, **kw)

    def search(self, query: str, **kw: Any):
        """A search whose hits are recorded as read in this session."""
        kw.setdefault("subject", self.subject)
        return self.client.search(query, session=self.id, **kw)

    def get(self, id: str):
        """A get recorded as read in this session."""
        return self.client.get(id, subject=self.subject, session=self.id)

    def gate(self, action: str, args: Optional[Dict[str, Any]] = None,
             justification: Sequence[str] = ()) -> GateDecision:
        """Ask the gate about action in this session."""
        return self.client.gate(action, args, justification, session=self.id, subject=self.subject)

    def tool(self, fn: Optional[Callable] = None, *, action: Optional[str] = None, channel: Optional[str] = None,
             source_ref: Any = None, gate: bool = True, observe: bool = True,
             justify: Optional[Callable[[Dict[str, Any]], Sequence[str]]] = None) -> Callable:
        """Wrap fn (or decorate it): gate each call, run it only when allowed, observe its output.

        action names the call to the gate (default: the function's name);
        channel is the observation's channel (default "tool:" + action);
        source_ref is a string or a function of the call's arguments;
        justify returns the ids of memories that justify a call, from its
        arguments; a call may also pass custody_justification=[ids].
        """
        if fn is None:
            return lambda f: self.tool(f, action=action, channel=channel, source_ref=source_ref,
                                       gate=gate, observe=observe, justify=justify)
        name = action or fn.__name__
        chan = channel or f"tool:{name}"
        sig = inspect.signature(fn)

        def before(args, kwargs):
            ids = list(kwargs.pop(JUSTIFICATION_KWARG, None) or ())
            call_args = _arguments(sig, args, kwargs)
            if justify is not None:
                ids += list(justify(call_args))
            if gate:
                decision = self.gate(name, call_args, ids)
                if not decision.allowed:
                    raise GateRefused(name, decision)
            return call_args

        def after(call_args, out):
            if observe and out is not None:
                ref = source_ref(call_args) if callable(source_ref) else (source_ref or name)
                self.observe(chan, out if isinstance(out, str) else json.dumps(out, default=str), ref)
            return out

        if inspect.iscoroutinefunction(fn):
            @functools.wraps(fn)
            async def wrapped_async(*args, **kwargs):
                call_args = before(args, kwargs)
                return after(call_args, await fn(*args, **kwargs))
            return wrapped_async

        @functools.wraps(fn)
        def wrapped(*args, **kwargs):
            call_args = before(args, kwargs)
            return after(call_args, fn(*args, **kwargs))
        return wrapped


def _arguments(sig: inspect.Signature, args, kwargs) -> Dict[str, Any]:
    """The call's arguments by name, defaults included, as the gate sees them."""
    try:
        bound = sig.bind(*args, **kwargs)
    except TypeError:
        return dict(kwargs)
    bound.apply_defaults()
    out: Dict[str, Any] = {}
    for name, value in bound.arguments.items():
        kind = sig.parameters[name].kind
        if kind is inspect.Parameter.VAR_KEYWORD:
            out.update(value)
        elif kind is inspect.Parameter.VAR_POSITIONAL:
            out[name] = list(value)
        else:
            out[name] = value
    return out


def wrap_tool(session: Session, fn: Callable, **options: Any) -> Callable:
    """Session.tool as a function: wrap_tool(session, fn, action=..., channel=...)."""
    return session.tool(fn, **options)
