"""A fake model endpoint on loopback for the real coding agents
(tests/tests/agents_*.rs): the CLI talks to it as to its vendor's API and
it answers the first turn with a call of one MCP tool, every later turn
with text. Standard library only.

    python3 fake_model.py DIALECT [TOOL]

DIALECT is the API spoken:

* `anthropic`: the Messages API (`POST /v1/messages`, SSE when `stream`),
  for Claude Code with `ANTHROPIC_BASE_URL`;
* `openai`: the Responses API (`POST …/responses`, SSE), for `codex exec`
  with a `[model_providers]` entry. Codex lists MCP tools only through its
  own `tool_search`, so the first turn is a `tool_search_call` for TOOL and
  the next a `function_call` of the tool it found (in its namespace);
* `gemini`: `…:streamGenerateContent?alt=sse` and `…:generateContent`, for
  the Gemini CLI with `GOOGLE_GEMINI_BASE_URL`;
* `chat`: OpenAI's Chat Completions (`POST …/chat/completions`, SSE when
  `stream`), for the CLIs that take any OpenAI-compatible endpoint
  (opencode, Qwen Code, Copilot CLI's own model, Cline, Continue). Qwen
  Code lists MCP tools only through its own `tool_search`, so where the
  tool is not declared but `tool_search` is, the first turn searches for it.

TOOL (default `trigger-elicitation-request`) is matched against the end of
each declared tool's name, as each CLI prefixes it with the server's name.

It prints `http://127.0.0.1:PORT` on its first line, then one JSON line per
request: `{"path": …, "turn": "call" | "search" | "text", "tool_result":
TEXT-OR-null, "tools": [names]}`, so that the test sees the tool's result
arrive in the CLI's next request. Anything it does not know gets a 404 and
is logged too (`"turn": "unknown"`).
"""

import json
import os
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

DIALECT = sys.argv[1] if len(sys.argv) > 1 else "anthropic"
TOOL = sys.argv[2] if len(sys.argv) > 2 else "trigger-elicitation-request"
# Printed lines from several handler threads must not interleave.
PRINT_LOCK = threading.Lock()
# FAKE_MODEL_DUMP=FILE appends every request's whole body there (for
# finding out what a new CLI version sends).
DUMP = os.environ.get("FAKE_MODEL_DUMP")


def emit(record):
    with PRINT_LOCK:
        sys.stdout.write(json.dumps(record) + "\n")
        sys.stdout.flush()


def is_tool(name):
    """True when `name` is TOOL behind a CLI's prefix (`mcp__everything__`,
    `mcp_everything_`), Codex spelling its hyphens as underscores."""
    name, tool = name.replace("-", "_"), TOOL.replace("-", "_")
    return name == tool or name.endswith("_" + tool)


def matching(names):
    """The declared tool that is TOOL."""
    return next((name for name in names if is_tool(name)), None)


def text_of(value):
    """Every string inside a tool result, joined: the shapes differ by API."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(text_of(v) for v in value)
    if isinstance(value, dict):
        return "\n".join(text_of(v) for v in value.values())
    return ""


# ------------------------------------------------------------- Anthropic


def anthropic(body):
    names = [t.get("name", "") for t in body.get("tools") or []]
    result = None
    messages = body.get("messages") or []
    if messages and isinstance(messages[-1].get("content"), list):
        for block in messages[-1]["content"]:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                result = text_of(block.get("content"))
    tool = matching(names)
    if result is None and tool:
        turn = "call"
        content = [{"type": "tool_use", "id": "toolu_fake_1", "name": tool, "input": {}}]
        stop = "tool_use"
    else:
        turn = "text"
        content = [{"type": "text", "text": "done"}]
        stop = "end_turn"
    return turn, result, names, content, stop


def anthropic_sse(content, stop, model):
    yield "message_start", {
        "type": "message_start",
        "message": {"id": "msg_fake", "type": "message", "role": "assistant", "model": model,
                    "content": [], "stop_reason": None, "stop_sequence": None,
                    "usage": {"input_tokens": 1, "output_tokens": 1}},
    }
    for index, block in enumerate(content):
        if block["type"] == "tool_use":
            start = dict(block, input={})
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        else:
            start = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": block["text"]}
        yield "content_block_start", {"type": "content_block_start", "index": index, "content_block": start}
        yield "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    yield "message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                            "usage": {"output_tokens": 1}}
    yield "message_stop", {"type": "message_stop"}


# ---------------------------------------------------------------- OpenAI


def openai_tool_names(tools):
    names = []
    for tool in tools or []:
        names.append(tool.get("name") or tool.get("type", ""))
        for inner in tool.get("tools") or []:
            names.append(tool.get("name", "") + "__" + inner.get("name", ""))
    return names


def openai(body):
    items = body.get("input") or []
    names = openai_tool_names(body.get("tools"))
    result = None
    searched = None
    searches = 0
    for item in items:
        if not isinstance(item, dict):
            continue
        kind = item.get("type")
        if kind == "function_call_output":
            result = text_of(item.get("output"))
        elif kind == "tool_search_output":
            searched = item
            searches += 1
    if result is not None:
        return "text", result, names, [message_item("done")]
    if searched is not None:
        # The tool as tool_search returned it: its namespace and name.
        for tool in searched.get("tools") or []:
            for inner in [tool] + list(tool.get("tools") or []):
                name = inner.get("name", "")
                if inner is not tool and is_tool(name) or inner is tool and tool.get("type") == "function" and is_tool(name):
                    namespace = tool.get("name") if inner is not tool else None
                    call = {"type": "function_call", "id": "fc_fake_1", "call_id": "call_fake_1",
                            "name": name, "arguments": "{}", "status": "completed"}
                    if namespace:
                        call["namespace"] = namespace
                    return "call", None, names, [call]
        if searches < SEARCHES:
            # Codex starts its MCP servers beside the first turn, and
            # tool_search sees only the servers that have listed their
            # tools: search again until the server is there (as a model
            # would), paced so that SEARCHES cover SEARCH_PACE * SEARCHES.
            time.sleep(SEARCH_PACE)
            return "search", None, names, [tool_search_call(searches)]
        return "text", None, names, [message_item("tool_search found nothing")]
    if any(n == "tool_search" for n in names):
        return "search", None, names, [tool_search_call(0)]
    tool = matching(names)
    if tool:
        call = {"type": "function_call", "id": "fc_fake_1", "call_id": "call_fake_1",
                "name": tool, "arguments": "{}", "status": "completed"}
        return "call", None, names, [call]
    return "text", None, names, [message_item("done")]


# How often, and how far apart, the fake searches Codex's tools for TOOL
# before it gives up: 200 searches 0.1 s apart, 20 s for the server to
# start (npx and node on a loaded machine).
SEARCHES = 200
SEARCH_PACE = 0.1


def tool_search_call(n):
    return {"type": "tool_search_call", "id": f"ts_fake_{n + 1}", "call_id": f"search_fake_{n + 1}",
            "status": "completed", "execution": "client", "arguments": {"query": TOOL, "limit": 8}}


def message_item(text):
    return {"type": "message", "id": "msg_fake", "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}]}


def openai_sse(output, model):
    response = {"id": "resp_fake", "object": "response", "model": model, "status": "in_progress", "output": []}
    yield "response.created", {"type": "response.created", "response": response}
    for index, item in enumerate(output):
        yield "response.output_item.added", {"type": "response.output_item.added", "output_index": index, "item": item}
        yield "response.output_item.done", {"type": "response.output_item.done", "output_index": index, "item": item}
    done = dict(response, status="completed", output=output,
                usage={"input_tokens": 1, "output_tokens": 1, "total_tokens": 2,
                       "input_tokens_details": {"cached_tokens": 0},
                       "output_tokens_details": {"reasoning_tokens": 0}})
    yield "response.completed", {"type": "response.completed", "response": done}


# ---------------------------------------------------------------- Gemini


def gemini(body):
    names = []
    for tool in body.get("tools") or []:
        for declaration in tool.get("functionDeclarations") or []:
            names.append(declaration.get("name", ""))
    result = None
    contents = body.get("contents") or []
    if contents:
        for part in contents[-1].get("parts") or []:
            if "functionResponse" in part:
                result = text_of(part["functionResponse"].get("response"))
    tool = matching(names)
    if result is None and tool:
        return "call", result, names, [{"functionCall": {"name": tool, "args": {}}}]
    return "text", result, names, [{"text": "done"}]


def gemini_chunk(parts):
    return {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2}}



# ------------------------------------------------------ Chat Completions


def chat_tool_names(tools):
    return [(t.get("function") or {}).get("name") or t.get("name", "") for t in tools or []]


def chat(body):
    """The next turn: `(turn, tool_result, names, message)`, where message
    is the assistant's `{content, tool_calls}`."""
    names = chat_tool_names(body.get("tools"))
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    # The result of our call: the tool messages after the last assistant
    # message that called TOOL (not those of a tool search).
    result = None
    called = False
    searches = 0
    for message in messages:
        if message.get("role") == "assistant":
            for call in message.get("tool_calls") or []:
                name = (call.get("function") or {}).get("name", "")
                if is_tool(name):
                    called = True
                elif name == "tool_search":
                    searches += 1
        elif message.get("role") == "tool" and called:
            result = text_of(message.get("content"))
    if result is not None or called:
        return "text", result, names, {"content": "done"}
    tool = matching(names)
    if tool:
        return "call", None, names, {"tool_calls": [chat_call("call_fake_1", tool, {})]}
    if TOOL == "none":
        return "text", None, names, {"content": "done"}
    if "tool_search" in names and searches < SEARCHES:
        # Qwen Code starts its MCP servers beside the first turn, as Codex
        # does: search again, paced, until the server has listed its tools.
        if searches:
            time.sleep(SEARCH_PACE)
        call = chat_call(f"call_search_{searches + 1}", "tool_search", {"query": "select:" + deferred(body)})
        return "search", None, names, {"tool_calls": [call]}
    return "text", None, names, {"content": "done"}


def deferred(body):
    """TOOL's full name (`mcp__everything__…`) as the system prompt's list
    of deferred tools gives it, or TOOL where the list does not have it
    yet."""
    names = re.findall(r'"([A-Za-z0-9_.-]+)"', text_of(body.get("messages")))
    return matching(names) or TOOL


def chat_call(call_id, name, arguments):
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


def chat_reply(message, model):
    finish = "tool_calls" if message.get("tool_calls") else "stop"
    return {"id": "chatcmpl-fake", "object": "chat.completion", "created": int(time.time()), "model": model,
            "choices": [{"index": 0, "message": dict({"role": "assistant", "content": None}, **message),
                         "finish_reason": finish}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}


def chat_sse(message, model):
    base = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": int(time.time()), "model": model}

    def chunk(delta, finish=None, **extra):
        return None, dict(base, choices=[{"index": 0, "delta": delta, "finish_reason": finish}], **extra)

    yield chunk({"role": "assistant", "content": ""})
    if message.get("content"):
        yield chunk({"content": message["content"]})
    for index, call in enumerate(message.get("tool_calls") or []):
        yield chunk({"tool_calls": [dict(call, index=index)]})
    yield chunk({}, "tool_calls" if message.get("tool_calls") else "stop")
    yield None, dict(base, choices=[], usage={"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2})


# ------------------------------------------------------------ the server


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def body(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            return json.loads(raw or b"{}")
        except ValueError:
            return {}

    def json_reply(self, value, status=200):
        data = json.dumps(value).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def sse(self, events, named=True):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        for name, data in events:
            text = data if isinstance(data, str) else json.dumps(data)
            line = (f"event: {name}\n" if named and name else "") + f"data: {text}\n\n"
            self.wfile.write(line.encode())
            self.wfile.flush()
        self.close_connection = True

    def do_GET(self):
        emit({"path": self.path, "method": "GET", "turn": "unknown", "tool_result": None, "tools": []})
        # A model list names the one model, for the CLIs that check theirs.
        self.json_reply({"object": "list", "data": [{"id": "fake", "object": "model", "owned_by": "fake"}],
                         "models": []})

    def do_HEAD(self):
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self):
        body = self.body()
        if DUMP:
            with PRINT_LOCK, open(DUMP, "a") as dump:
                dump.write(json.dumps({"path": self.path, "body": body}) + "\n")
        path = self.path
        model = body.get("model", "fake")
        if DIALECT == "anthropic" and "/messages" in path and "count_tokens" not in path:
            turn, result, names, content, stop = anthropic(body)
            emit({"path": path, "turn": turn, "tool_result": result, "tools": names})
            if body.get("stream"):
                self.sse(anthropic_sse(content, stop, model))
            else:
                self.json_reply({"id": "msg_fake", "type": "message", "role": "assistant", "model": model,
                                 "content": content, "stop_reason": stop, "stop_sequence": None,
                                 "usage": {"input_tokens": 1, "output_tokens": 1}})
        elif DIALECT == "anthropic" and "count_tokens" in path:
            self.json_reply({"input_tokens": 1})
        elif DIALECT == "openai" and path.rstrip("/").endswith("/responses"):
            turn, result, names, output = openai(body)
            emit({"path": path, "turn": turn, "tool_result": result, "tools": names})
            self.sse(openai_sse(output, model))
        elif DIALECT == "gemini" and ":streamGenerateContent" in path:
            turn, result, names, parts = gemini(body)
            emit({"path": path, "turn": turn, "tool_result": result, "tools": names})
            self.sse([(None, gemini_chunk(parts))], named=False)
        elif DIALECT == "gemini" and ":generateContent" in path:
            # The CLI's side questions (next speaker, loop checks) get a
            # plain text answer; it is logged, and never a tool call.
            emit({"path": path, "turn": "side", "tool_result": None, "tools": []})
            self.json_reply(gemini_chunk([{"text": '{"next_speaker": "user", "reasoning": "done"}'}]))
        elif DIALECT == "chat" and path.rstrip("/").endswith("/chat/completions"):
            turn, result, names, message = chat(body)
            emit({"path": path, "turn": turn, "tool_result": result, "tools": names})
            if body.get("stream"):
                self.sse(list(chat_sse(message, model)) + [(None, "[DONE]")], named=False)
            else:
                self.json_reply(chat_reply(message, model))
        elif DIALECT == "gemini" and ":countTokens" in path:
            self.json_reply({"totalTokens": 1})
        else:
            emit({"path": path, "turn": "unknown", "tool_result": None, "tools": []})
            self.json_reply({"error": {"message": f"the fake does not serve {path}"}}, status=404)


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    print(f"http://127.0.0.1:{server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
