// ELK's layered layout of one graph, for bench/bench_layout.py only (the app never runs Node).
// stdin: {"nodes": [{"id", "width", "height"}], "edges": [[src, dst], ...]}
// stdout: {"ms": layout time inside Node, "x": [...], "y": [...]} (node centres, in order)
import ELK from "elkjs/lib/elk.bundled.js";

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const input = JSON.parse(Buffer.concat(chunks).toString());
const graph = {
  id: "root",
  layoutOptions: { "elk.algorithm": "layered", "elk.direction": "DOWN" },
  children: input.nodes,
  edges: input.edges.map(([s, t], i) => ({ id: `e${i}`, sources: [s], targets: [t] })),
};
const start = performance.now();
const out = await new ELK().layout(graph);
const ms = performance.now() - start;
const x = out.children.map((n) => n.x + n.width / 2);
const y = out.children.map((n) => n.y + n.height / 2);
process.stdout.write(JSON.stringify({ ms, x, y }));
