"""OpenAI-compatible servers (POST {base}/chat/completions): OpenRouter, vLLM, llama.cpp,
KoboldCpp, text-generation-webui, ... as SillyTavern 1.12.6's "Custom (OpenAI-compatible)"
source sends to them.

Internal: the API is :mod:`compiler.providers`.

The Chat Completions body of :mod:`compiler.providers.openai_chat`, with what such servers take:

- ``max_tokens`` (not ``max_completion_tokens``, which many of them do not read), sent as
  asked: no model table, so no maximum output to clamp to and no
  ``lower.unknown_output_limit`` warning for a name the compiler does not know;
- system text always under ``system`` (never ``developer``, which llama.cpp's and vLLM's
  chat templates may not know), and every sampler sent whatever the model's name (no
  reasoning-model rule: the server decides);
- a message ``name`` as SillyTavern writes it (``[a-zA-Z0-9_]{1,64}``, other characters as
  ``_``; speakers a name would merge are kept apart as ``Name: `` in the content, as the
  openai dialect does);
- a final assistant message kept as it is: servers that continue it take it as a prefill,
  and nothing is reported;
- ``top_k`` when the caller gives it (vLLM, llama.cpp and OpenRouter take it); a preset's
  ``top_k`` is not sent, as SillyTavern's Custom source does not send it;
- at most 4 stop sequences (SillyTavern's own limit; more: the first 4, ``lower.unsupported``).

The model is free-form and required (``lower.model_required``); no window is known, so the
budget is ``--budget``, the preset's ``openai_max_context`` less the reply, or the profile's.
Counts are the cookbook's Chat arithmetic over a tiktoken encoding, as SillyTavern counts
for this source: the model's own for a name tiktoken knows (``gpt-4o``, ``openai/gpt-4o``:
o200k_base), else cl100k_base (SillyTavern's fallback tokenizer, ``gpt-3.5-turbo``;
Llama 3's vocabulary extends it). ``--encoding`` overrides. They are the encoding's count,
not the server's tokenizer's.

Not sent: ``stream`` (how the caller reads the reply: the SDK's ``stream=True``, or the
caller's own key) and SillyTavern's empty ``logit_bias`` (``{}``, a no-op).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, ClassVar

from compiler._base.frame import ContextFrame, Message
from compiler._base.tokens import encoding_name_for_model
from compiler.errors import Diagnostic, LoweringError, TokenizerError
from compiler.providers.conversation import prepared
from compiler.providers.dialect import NO_OPTIONS, CacheRule, LoweringOptions, ModelRequest
from compiler.providers.openai_chat import (
    MAX_CALL_ID,
    MAX_STOP,
    OpenAIChat,
    distinct_names,
    openai_options,
)

#: The encoding a model name tiktoken does not know is counted with (SillyTavern's
#: fallback tokenizer for the custom source, gpt-3.5-turbo's).
FALLBACK_ENCODING = "cl100k_base"

#: What SillyTavern's PromptManager.sanitizeName replaces in a message name.
ST_NAME_RE = re.compile(r"[^a-zA-Z0-9_]")


def st_name(name: str) -> str:
    """A message ``name`` as SillyTavern 1.12.6 sends it: ``[a-zA-Z0-9_]``, at most 64."""
    return ST_NAME_RE.sub("_", name)[:64] or "_"


class OpenAICompatible(OpenAIChat):
    """The Chat Completions body an OpenAI-compatible server takes."""

    name: ClassVar[str] = "openai-compatible"
    preset_model_key: ClassVar[str | None] = "custom_model"
    windows: ClassVar[Mapping[str, int]] = {}
    output_limits: ClassVar[Mapping[str, int]] = {}
    cache_rules: ClassVar[Mapping[str, CacheRule]] = {}  # a server's caching is its own
    output_field: ClassVar[str] = "max_tokens"
    default_model: ClassVar[str] = ""

    def lower(
        self,
        frame: ContextFrame,
        model: str,
        options: LoweringOptions = NO_OPTIONS,
        report: list[Diagnostic] | None = None,
    ) -> ModelRequest:
        if not model.strip():
            raise LoweringError(
                code="lower.model_required",
                message="the openai-compatible provider needs the model the server serves",
                hint="pass --model NAME (a preset's custom_model is used when it has one)",
            )
        messages, tools = prepared(frame, self, options, report, id_limit=MAX_CALL_ID)
        wire = [self.message(m) for m in distinct_names(messages, st_name)]
        body: ModelRequest = {"model": model, "messages": wire}
        if tools:
            body["tools"] = [self.tool(t) for t in tools]
        options = self.within_sampler_ranges(options, report)
        body.update(openai_options(options, "max_tokens"))
        if options.top_k is not None and "top_k" not in options.quiet:
            body["top_k"] = options.top_k  # the caller's: vLLM, llama.cpp, OpenRouter take it
        stop = body.get("stop")
        if stop and len(stop) > MAX_STOP:
            body["stop"] = stop[:MAX_STOP]
            self.unsupported(
                report, options, f"stop with {len(stop)} sequences", f"the first {MAX_STOP} sent"
            )
        return body

    def message(self, m: Message, system: str = "system") -> dict[str, Any]:
        out = super().message(m, "system")
        if "name" in out:
            out["name"] = st_name(m["name"])
        return out

    def within_output_limit(
        self, model: str, options: LoweringOptions, report: list[Diagnostic] | None
    ) -> LoweringOptions:
        """Sent as asked: the server's model and its maximum output are not known here."""
        return options

    def encoding(self, model: str) -> str:
        """tiktoken's encoding of an OpenAI model name, else :data:`FALLBACK_ENCODING`."""
        try:
            return encoding_name_for_model(model)
        except TokenizerError:
            return FALLBACK_ENCODING


DIALECT = OpenAICompatible()
