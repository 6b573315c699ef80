"""The protocol layer: what the model sees of junior. ``tools``: the two tools' names, bounds, schemas and
descriptions; ``requests``: their input rules; ``call_answers``: a call's result and every error and refusal;
``search_answers``: searchTools' rows, answers and hints; ``limits``: the nesting limit checked before anything
recursive sees a model's arguments. This face hands their names on, so callers write ``protocol.error(...)``. It may
import the schemas layer (a schema's outline, jsonschema's failures read) and the ground, nothing above.
"""

from __future__ import annotations

from junior_core._protocol.call_answers import (
    NOT_PERMITTED as NOT_PERMITTED,
)
from junior_core._protocol.call_answers import (
    POLICY_FAILED as POLICY_FAILED,
)
from junior_core._protocol.call_answers import (
    POLICY_LATE as POLICY_LATE,
)
from junior_core._protocol.call_answers import (
    Refusal as Refusal,
)
from junior_core._protocol.call_answers import (
    broken_schema as broken_schema,
)
from junior_core._protocol.call_answers import (
    clip as clip,
)
from junior_core._protocol.call_answers import (
    error as error,
)
from junior_core._protocol.call_answers import (
    internal_error as internal_error,
)
from junior_core._protocol.call_answers import (
    invalid_argument as invalid_argument,
)
from junior_core._protocol.call_answers import (
    is_json as is_json,
)
from junior_core._protocol.call_answers import (
    nesting_error as nesting_error,
)
from junior_core._protocol.call_answers import (
    not_an_object as not_an_object,
)
from junior_core._protocol.call_answers import (
    not_for_the_model as not_for_the_model,
)
from junior_core._protocol.call_answers import (
    not_json as not_json,
)
from junior_core._protocol.call_answers import (
    result as result,
)
from junior_core._protocol.call_answers import (
    runtime_closed as runtime_closed,
)
from junior_core._protocol.call_answers import (
    source_busy as source_busy,
)
from junior_core._protocol.call_answers import (
    source_unavailable as source_unavailable,
)
from junior_core._protocol.call_answers import (
    timed_out as timed_out,
)
from junior_core._protocol.call_answers import (
    tool_error as tool_error,
)
from junior_core._protocol.call_answers import (
    tool_failed as tool_failed,
)
from junior_core._protocol.call_answers import (
    truncated as truncated,
)
from junior_core._protocol.call_answers import (
    unknown_tool as unknown_tool,
)
from junior_core._protocol.call_answers import (
    validation_error as validation_error,
)
from junior_core._protocol.requests import (
    SearchRequest as SearchRequest,
)
from junior_core._protocol.requests import (
    encode_cursor as encode_cursor,
)
from junior_core._protocol.requests import (
    execute_request as execute_request,
)
from junior_core._protocol.requests import (
    json_arguments as json_arguments,
)
from junior_core._protocol.requests import (
    search_request as search_request,
)
from junior_core._protocol.search_answers import (
    ANNOTATION_DEFAULTS as ANNOTATION_DEFAULTS,
)
from junior_core._protocol.search_answers import (
    BRIEF_NOTE as BRIEF_NOTE,
)
from junior_core._protocol.search_answers import (
    batch_answer as batch_answer,
)
from junior_core._protocol.search_answers import (
    brief_row as brief_row,
)
from junior_core._protocol.search_answers import (
    corrected_note as corrected_note,
)
from junior_core._protocol.search_answers import (
    no_match_hint as no_match_hint,
)
from junior_core._protocol.search_answers import (
    search_answer as search_answer,
)
from junior_core._protocol.search_answers import (
    shortened_note as shortened_note,
)
from junior_core._protocol.search_answers import (
    shown_annotations as shown_annotations,
)
from junior_core._protocol.search_answers import (
    tool_names_answer as tool_names_answer,
)
from junior_core._protocol.search_answers import (
    tool_row as tool_row,
)
from junior_core._protocol.search_answers import (
    unknown_source_hint as unknown_source_hint,
)
from junior_core._protocol.search_answers import (
    weak_hint as weak_hint,
)
from junior_core._protocol.search_answers import (
    with_matched as with_matched,
)
from junior_core._protocol.tools import (
    DEFAULT_RESULTS as DEFAULT_RESULTS,
)
from junior_core._protocol.tools import (
    EXECUTE_DESCRIPTION as EXECUTE_DESCRIPTION,
)
from junior_core._protocol.tools import (
    EXECUTE_SCHEMA as EXECUTE_SCHEMA,
)
from junior_core._protocol.tools import (
    EXECUTE_TOOL as EXECUTE_TOOL,
)
from junior_core._protocol.tools import (
    MAX_QUERIES as MAX_QUERIES,
)
from junior_core._protocol.tools import (
    MAX_QUERY as MAX_QUERY,
)
from junior_core._protocol.tools import (
    MAX_RESULTS as MAX_RESULTS,
)
from junior_core._protocol.tools import (
    MAX_SOURCE as MAX_SOURCE,
)
from junior_core._protocol.tools import (
    MAX_TOOL_NAME as MAX_TOOL_NAME,
)
from junior_core._protocol.tools import (
    MAX_TOOL_NAMES as MAX_TOOL_NAMES,
)
from junior_core._protocol.tools import (
    MESSAGE_LIMIT as MESSAGE_LIMIT,
)
from junior_core._protocol.tools import (
    NEAREST_SOURCES as NEAREST_SOURCES,
)
from junior_core._protocol.tools import (
    NO_MATCH_CHARS as NO_MATCH_CHARS,
)
from junior_core._protocol.tools import (
    SEARCH_SCHEMA as SEARCH_SCHEMA,
)
from junior_core._protocol.tools import (
    SEARCH_TOOLS as SEARCH_TOOLS,
)
from junior_core._protocol.tools import (
    search_description as search_description,
)
from junior_core._schemas.outline import (
    compact_params as compact_params,
)
from junior_core._schemas.outline import (
    schema_omitted as schema_omitted,
)
from junior_core._schemas.outline import (
    schema_outline as schema_outline,
)
