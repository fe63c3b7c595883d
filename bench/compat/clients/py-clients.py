# Drives the Python MCP SDK (mcp 2.3.0) through the gateway: Streamable HTTP in legacy and auto (2026) mode, and HTTP+SSE.
import asyncio, json, sys
import mcp_types as types
from mcp import Client
from mcp.client.sse import sse_client

U = sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:18931/mcp"

async def sampling(ctx, params):
    return types.CreateMessageResult(model="m", role="assistant", content=types.TextContent(type="text", text="sampled"))
async def elicit(ctx, params):
    return types.ElicitResult(action="decline")
async def roots(ctx):
    return types.ListRootsResult(roots=[types.Root(uri="file:///tmp", name="tmp")])

def text(res):
    c = res.content[0] if res.content else None
    return (getattr(c, "text", "") or "")[:60].replace("\n", " ")

async def checks(c):
    r = {}
    async def step(name, fn):
        try:
            r[name] = "ok: " + str(await fn())
        except Exception as e:
            r[name] = f"error: {type(e).__name__}: {str(e)[:110]}"
    r["protocol"] = c.protocol_version
    await step("tools/list", lambda: _n(c.list_tools(), "tools"))
    await step("tools/call get-sum", lambda: _t(c.call_tool("everything__get-sum", {"a": 2, "b": 3})))
    await step("tools/list after first call", lambda: _n(c.list_tools(), "tools"))
    seen = []
    async def prog(p, total, msg): seen.append(p)
    async def lro():
        res = await c.call_tool("everything__trigger-long-running-operation", {"duration": 1, "steps": 2}, progress_callback=prog)
        await asyncio.sleep(0.3)
        return f"{'isError ' if res.is_error else ''}progress {seen}"
    await step("progress", lro)
    await step("sampling", lambda: _t(c.call_tool("everything__trigger-sampling-request", {"prompt": "hi", "maxTokens": 5})))
    await step("elicitation", lambda: _t(c.call_tool("everything__trigger-elicitation-request", {})))
    await step("roots", lambda: _t(c.call_tool("everything__get-roots-list", {})))
    await step("resources/list", lambda: _n(c.list_resources(), "resources"))
    await step("resources/templates/list", lambda: _n(c.list_resource_templates(), "resource_templates"))
    await step("resources/read", lambda: _rd(c.read_resource("demo://resource/dynamic/text/1")))
    await step("prompts/list", lambda: _n(c.list_prompts(), "prompts"))
    await step("prompts/get", lambda: _pg(c.get_prompt("everything__args-prompt", {"city": "Paris"})))
    await step("completion/complete", lambda: _cp(c.complete(types.PromptReference(type="ref/prompt", name="everything__completable-prompt"), {"name": "department", "value": "E"})))
    return r

async def _n(aw, field):
    return f"{len(getattr(await aw, field))} {field}"
async def _t(aw):
    res = await aw
    return ("isError: " if res.is_error else "") + text(res)
async def _rd(aw):
    return (await aw).contents[0].text[:40]
async def _pg(aw):
    return (await aw).messages[0].content.text[:40]
async def _cp(aw):
    return (await aw).completion.values

async def run(label, server, mode):
    try:
        async with asyncio.timeout(90):
            async with Client(server, mode=mode, sampling_callback=sampling, elicitation_callback=elicit, list_roots_callback=roots) as c:
                return await checks(c)
    except BaseException as e:
        return {"connect": f"error: {type(e).__name__}: {str(e)[:200]}"}

async def main():
    out = {}
    out["Python SDK, Streamable HTTP, mode=legacy (2025)"] = await run("", U, "legacy")
    out["Python SDK, Streamable HTTP, mode=auto (2026)"] = await run("", U, "auto")
    out["Python SDK, HTTP+SSE (sse_client)"] = await run("", sse_client(U + "/sse"), "legacy")
    print(json.dumps(out, indent=1, default=str))

asyncio.run(main())
