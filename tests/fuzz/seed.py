"""Seeds the fuzz corpora (tests/fuzz/corpus/TARGET, not committed) from the repository's own
files, in each target's input layout (tests/fuzz/props.rs): cases, gateway profiles, cassettes,
and the cassettes' request and response bodies. Run: python3 tests/fuzz/seed.py"""
import json, pathlib, hashlib

root = pathlib.Path(__file__).resolve().parents[2]
out = root / "tests/fuzz/corpus"
providers = ["openai-chat", "openai-responses", "anthropic", "gemini", "text-protocol"]

def put(target, data):
    d = out / target
    d.mkdir(parents=True, exist_ok=True)
    (d / hashlib.sha1(data).hexdigest()).write_bytes(data)

for p in sorted((root / "cases").glob("*.toml")):
    put("case", p.read_bytes())
for p in sorted((root / "gateways").glob("*.toml")):
    put("profile", p.read_bytes())
for pi, prov in enumerate(providers):
    for p in sorted((root / "cassettes" / prov).rglob("*.json"))[::10]:
        put("cassette", p.read_bytes())
        c = json.loads(p.read_text())
        for it in c["interactions"]:
            req = json.dumps(it["request"]["body"]).encode()
            path = {0: 0, 1: 1, 2: 2, 3: 4 if "stream" in it["response"] else 3, 4: 5}[pi]
            put("request_decoder", bytes([path]) + req)
            put("proxy_request", bytes([[0, 2, 3, 4, 0][pi]]) + req.replace(
                b'"model": ', b'"model": "to-%s", "x": ' % prov.encode(), 1))
            r = it["response"]
            if "stream" in r:
                body, sel = "".join(r["stream"]).encode(), pi | 8
            else:
                body, sel = json.dumps(r.get("body")).encode(), pi
            put("response", bytes([sel, 3, 1, 7, 64]) + body)
tools = []
for p in sorted((root / "cases/tools").glob("*.json")):
    t = json.loads(p.read_text())
    tool = {"name": t["name"], "inputSchema": t.get("parameters", {"type": "object"})}
    if "description" in t:
        tool["description"] = t["description"]
    tools.append(tool)
    put("mcp_tools", json.dumps({"tools": [tool]}).encode())
put("mcp_tools", json.dumps({"tools": tools[:16], "nextCursor": "2"}).encode())
print("seeded", out)
