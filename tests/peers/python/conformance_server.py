"""The server the conformance suite's server scenarios expect (0.1.16, eras
2025-06-18 and 2025-11-25), on the pinned `mcp` 2.3.0: every tool, resource,
prompt and handler a scenario asks for by name, with the content it checks.

    python3 conformance_server.py [PORT]     Streamable HTTP (PORT 0: any free one)
    python3 conformance_server.py --stdio    stdio, for `elicit serve -- …`

Over HTTP it prints one line once it accepts connections, flushed:

    listening on http://127.0.0.1:PORT/mcp

and keeps every event in memory, each with an id and a 100 ms `retry`, so
that `test_reconnection` can close its stream mid-call and the client resume
it with `Last-Event-ID` (server-sse-polling, SEP-1699). With
host="127.0.0.1" the SDK refuses foreign Host and Origin headers
(dns-rebinding-protection).

What each scenario checks was read from the suite's dist/index.js; the
expected texts below are its examples. Where the SDK has no decorator for
something (a raw input schema, a raw elicitation schema, subscribe,
logging/setLevel) the low-level handler or session does it.
"""

import base64
import logging
import sys
import warnings

import anyio
from mcp_types import (
    AudioContent,
    Completion,
    EmbeddedResource,
    EmptyResult,
    ImageContent,
    SamplingMessage,
    SetLevelRequestParams,
    SubscribeRequestParams,
    TextContent,
    TextResourceContents,
    UnsubscribeRequestParams,
)

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.prompts.base import UserMessage

server = MCPServer("elicit-conformance-server", version="1.0.0")

# A 1x1 red PNG and a silent one-sample WAV: the smallest valid media.
PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
)
WAV = base64.b64encode(
    b"RIFF" + (38).to_bytes(4, "little") + b"WAVEfmt " + (16).to_bytes(4, "little")
    + (1).to_bytes(2, "little") + (1).to_bytes(2, "little") + (8000).to_bytes(4, "little")
    + (16000).to_bytes(4, "little") + (2).to_bytes(2, "little") + (16).to_bytes(2, "little")
    + b"data" + (2).to_bytes(4, "little") + b"\x00\x00"
).decode()


def image() -> ImageContent:
    return ImageContent(type="image", data=PNG, mime_type="image/png")


# --- tools -----------------------------------------------------------------


@server.tool(structured_output=False)
def test_simple_text() -> str:
    """Returns one text block."""
    return "This is a simple text response for testing."


@server.tool(structured_output=False)
def test_image_content() -> ImageContent:
    """Returns one PNG image."""
    return image()


@server.tool(structured_output=False)
def test_audio_content() -> AudioContent:
    """Returns one WAV clip."""
    return AudioContent(type="audio", data=WAV, mime_type="audio/wav")


@server.tool(structured_output=False)
def test_embedded_resource() -> EmbeddedResource:
    """Returns an embedded text resource."""
    return EmbeddedResource(
        type="resource",
        resource=TextResourceContents(
            uri="test://embedded-resource",
            mime_type="text/plain",
            text="This is an embedded resource content.",
        ),
    )


@server.tool(structured_output=False)
def test_multiple_content_types() -> list[TextContent | ImageContent | EmbeddedResource]:
    """Returns text, an image and an embedded resource."""
    return [
        TextContent(type="text", text="Multiple content types test:"),
        image(),
        EmbeddedResource(
            type="resource",
            resource=TextResourceContents(
                uri="test://mixed-content-resource",
                mime_type="application/json",
                text='{"test":"data","value":123}',
            ),
        ),
    ]


@server.tool(structured_output=False)
async def test_tool_with_logging(ctx: Context) -> str:
    """Sends three info log messages, 50 ms apart."""
    await ctx.info("Tool execution started")
    await anyio.sleep(0.05)
    await ctx.info("Tool processing data")
    await anyio.sleep(0.05)
    await ctx.info("Tool execution completed")
    return "Logging tool completed"


@server.tool(structured_output=False)
def test_error_handling() -> str:
    """Always fails, as a tool error (isError), not a protocol error."""
    raise ToolError("This tool intentionally returns an error for testing")


@server.tool(structured_output=False)
async def test_tool_with_progress(ctx: Context) -> str:
    """Reports progress 0, 50 and 100 of 100, 50 ms apart."""
    for step, progress in enumerate((0, 50, 100)):
        if step:
            await anyio.sleep(0.05)
        await ctx.report_progress(progress, 100)
    return "Progress tool completed"


@server.tool(structured_output=False)
async def test_sampling(prompt: str, ctx: Context) -> str:
    """Asks the client's LLM (sampling/createMessage) and returns its answer."""
    result = await ctx.session.create_message(
        [SamplingMessage(role="user", content=TextContent(type="text", text=prompt))],
        max_tokens=100,
        related_request_id=ctx.request_id,
    )
    text = result.content.text if isinstance(result.content, TextContent) else str(result.content)
    return f"LLM response: {text}"


async def elicit(ctx: Context, message: str, schema: dict) -> str:
    # A raw schema: the suite checks keywords (defaults, oneOf, enumNames)
    # that a pydantic model would not produce as written.
    result = await ctx.session.elicit_form(message, schema, related_request_id=ctx.request_id)
    return f"User response: action={result.action}, content={result.content}"


@server.tool(structured_output=False)
async def test_elicitation(message: str, ctx: Context) -> str:
    """Asks the user for a username and an email (elicitation/create)."""
    return await elicit(
        ctx,
        message,
        {
            "type": "object",
            "properties": {
                "username": {"type": "string", "description": "User's response"},
                "email": {"type": "string", "description": "User's email address"},
            },
            "required": ["username", "email"],
        },
    )


@server.tool(structured_output=False)
async def test_elicitation_sep1034_defaults(ctx: Context) -> str:
    """Asks with a default for every primitive type (SEP-1034)."""
    return await elicit(
        ctx,
        "Please review and update the form fields with defaults",
        {
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "User name", "default": "John Doe"},
                "age": {"type": "integer", "description": "User age", "default": 30},
                "score": {"type": "number", "description": "User score", "default": 95.5},
                "status": {
                    "type": "string",
                    "description": "User status",
                    "enum": ["active", "inactive", "pending"],
                    "default": "active",
                },
                "verified": {"type": "boolean", "description": "Verification status", "default": True},
            },
            "required": [],
        },
    )


@server.tool(structured_output=False)
async def test_elicitation_sep1330_enums(ctx: Context) -> str:
    """Asks with the five enum shapes of SEP-1330."""
    return await elicit(
        ctx,
        "Please select options from the enum fields",
        {
            "type": "object",
            "properties": {
                "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
                "titledSingle": {
                    "type": "string",
                    "oneOf": [
                        {"const": "value1", "title": "First Option"},
                        {"const": "value2", "title": "Second Option"},
                        {"const": "value3", "title": "Third Option"},
                    ],
                },
                "legacyEnum": {
                    "type": "string",
                    "enum": ["opt1", "opt2", "opt3"],
                    "enumNames": ["Option One", "Option Two", "Option Three"],
                },
                "untitledMulti": {
                    "type": "array",
                    "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
                },
                "titledMulti": {
                    "type": "array",
                    "items": {
                        "anyOf": [
                            {"const": "value1", "title": "First Choice"},
                            {"const": "value2", "title": "Second Choice"},
                            {"const": "value3", "title": "Third Choice"},
                        ]
                    },
                },
            },
            "required": [],
        },
    )


@server.tool(description="Tool with JSON Schema 2020-12 features", structured_output=False)
def json_schema_2020_12_tool(name: str = "", address: dict | None = None) -> str:
    """Its published schema is replaced below."""
    return f"name={name}, address={address}"


# The scenario checks that $schema, $defs and additionalProperties reach the
# client as written; the schema the SDK derives from the signature has none.
server._tool_manager.get_tool("json_schema_2020_12_tool").parameters = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"}},
    "additionalProperties": False,
}


@server.tool(structured_output=False)
async def test_reconnection(ctx: Context) -> str:
    """Closes its SSE stream mid-call (SEP-1699), then answers: the client
    gets the answer once it resumes with Last-Event-ID. Over stdio closing
    is a no-op and the answer comes on the same stream."""
    await anyio.sleep(0.05)
    await ctx.close_sse_stream()
    await anyio.sleep(0.2)
    return "Reconnection test completed"


# --- resources -------------------------------------------------------------


@server.resource("test://static-text", name="static-text", description="A static text resource", mime_type="text/plain")
def static_text() -> str:
    return "This is the content of the static text resource."


@server.resource(
    "test://static-binary", name="static-binary", description="A static binary resource", mime_type="image/png"
)
def static_binary() -> bytes:
    return base64.b64decode(PNG)


@server.resource(
    "test://template/{id}/data",
    name="template",
    description="A resource template with an id",
    mime_type="application/json",
)
def template(id: str) -> str:
    return f'{{"id":"{id}","templateTest":true,"data":"Data for ID: {id}"}}'


@server.resource(
    "test://watched-resource", name="watched-resource", description="A resource to subscribe to", mime_type="text/plain"
)
def watched() -> str:
    return "Watched resource content"


subscribed: set[str] = set()


async def subscribe(ctx, params: SubscribeRequestParams) -> EmptyResult:
    subscribed.add(str(params.uri))
    return EmptyResult()


async def unsubscribe(ctx, params: UnsubscribeRequestParams) -> EmptyResult:
    subscribed.discard(str(params.uri))
    return EmptyResult()


async def set_level(ctx, params: SetLevelRequestParams) -> EmptyResult:
    return EmptyResult()


# MCPServer has no decorator for these; registering them also declares the
# `resources.subscribe` and `logging` capabilities.
server._lowlevel_server.add_request_handler("resources/subscribe", SubscribeRequestParams, subscribe)
server._lowlevel_server.add_request_handler("resources/unsubscribe", UnsubscribeRequestParams, unsubscribe)
server._lowlevel_server.add_request_handler("logging/setLevel", SetLevelRequestParams, set_level)


# --- prompts and completion ------------------------------------------------


@server.prompt(description="A simple prompt without arguments")
def test_simple_prompt() -> list[UserMessage]:
    return [UserMessage("This is a simple prompt for testing.")]


@server.prompt(description="A prompt with two required arguments")
def test_prompt_with_arguments(arg1: str, arg2: str) -> list[UserMessage]:
    return [UserMessage(f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'")]


@server.prompt(description="A prompt that embeds a resource")
def test_prompt_with_embedded_resource(resourceUri: str) -> list[UserMessage]:
    return [
        UserMessage(
            EmbeddedResource(
                type="resource",
                resource=TextResourceContents(
                    uri=resourceUri, mime_type="text/plain", text="Embedded resource content for testing."
                ),
            )
        ),
        UserMessage("Please process the embedded resource above."),
    ]


@server.prompt(description="A prompt with an image")
def test_prompt_with_image() -> list[UserMessage]:
    return [UserMessage(image()), UserMessage("Please analyze the image above.")]


@server.completion()
async def complete(ref, argument, context) -> Completion:
    values = [v for v in ("paris", "park", "party", "test", "testing") if v.startswith(argument.value)]
    return Completion(values=values, total=len(values), has_more=False)


# --- transports ------------------------------------------------------------


def negotiated_version(app):
    """`app`, reading an `MCP-Protocol-Version: 2025-03-26` header as
    2025-11-25.

    server-sse-polling initializes with 2025-11-25 but sends its raw
    `test_reconnection` POST (and server-sse-multiple-streams its raw
    POSTs) with 2025-03-26, and the SDK judges by the header: it sends the
    priming event, and lets a tool close its stream, only from 2025-11-25
    on. This server speaks no 2025-03-26 of its own, so the header can only
    be that quirk of the suite.
    """

    async def upgraded(scope, receive, send):
        if scope["type"] == "http":
            headers = [
                (k, b"2025-11-25" if k == b"mcp-protocol-version" and v == b"2025-03-26" else v)
                for k, v in scope["headers"]
            ]
            scope = dict(scope, headers=headers)
        await app(scope, receive, send)

    return upgraded


async def serve_http(port: int) -> None:
    # Imported here: http_server.py registers its own tools on another
    # server, which stdio never needs.
    from http_server import MemoryEventStore, serve_app

    app = server.streamable_http_app(host="127.0.0.1", event_store=MemoryEventStore(), retry_interval=100)
    await serve_app(negotiated_version(app), port)

if __name__ == "__main__":
    # The SDK logs every session and tool error at INFO, and warns that
    # sampling is deprecated in 2026-07-28: noise in a test's output.
    logging.getLogger("mcp").setLevel(logging.WARNING)
    warnings.simplefilter("ignore")
    if "--stdio" in sys.argv:
        server.run()
    else:
        numbers = [a for a in sys.argv[1:] if a.isdigit()]
        anyio.run(serve_http, int(numbers[0]) if numbers else 0)
