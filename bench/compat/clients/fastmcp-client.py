# FastMCP (Python, 4.0.10) Client through the gateway: Streamable HTTP and HTTP+SSE.
import asyncio, json
from fastmcp import Client
from fastmcp.client.transports import SSETransport, StreamableHttpTransport

async def run(transport):
    r = {}
    async def step(name, aw):
        try: r[name] = "ok: " + str(await aw)[:90]
        except BaseException as e: r[name] = f"error: {type(e).__name__}: {str(e)[:110]}"
    try:
        async with asyncio.timeout(60):
            async with Client(transport) as c:
                async def n(aw): return len(await aw)
                async def t(aw):
                    res = await aw
                    return res.content[0].text[:50]
                async def rd(aw): return (await aw)[0].text[:40]
                async def pg(aw): return (await aw).messages[0].content.text[:40]
                async def prog():
                    seen = []
                    async def h(p, total, msg): seen.append(p)
                    await c.call_tool("everything__trigger-long-running-operation", {"duration": 1, "steps": 2}, progress_handler=h)
                    return f"progress {seen}"
                await step("tools/list", n(c.list_tools()))
                await step("tools/call get-sum", t(c.call_tool("everything__get-sum", {"a": 2, "b": 3})))
                await step("progress", prog())
                await step("resources/list", n(c.list_resources()))
                await step("resources/read", rd(c.read_resource("demo://resource/dynamic/text/1")))
                await step("prompts/list", n(c.list_prompts()))
                await step("prompts/get", pg(c.get_prompt("everything__args-prompt", {"city": "Paris"})))
                await step("ping", c.ping())
    except BaseException as e:
        r["connect"] = f"error: {type(e).__name__}: {str(e)[:200]}"
    return r

async def main():
    print(json.dumps({
        "FastMCP Client, Streamable HTTP": await run(StreamableHttpTransport("http://127.0.0.1:18931/mcp")),
        "FastMCP Client, HTTP+SSE": await run(SSETransport("http://127.0.0.1:18931/mcp/sse")),
    }, indent=1))
asyncio.run(main())
