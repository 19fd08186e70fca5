// Loads a GGUF model with llama.cpp (through node-llama-cpp's prebuilt CPU binary), evaluates a
// prompt given as token ids and prints the greedy next token and the five highest raw logits as
// one JSON line:
//   {"next": 19356, "top5": [[19356, 0.2508251368999481], ...]}
// A test can then check that llama.cpp reads a model (for example one served by a mount) to the
// same numbers as the original file.
//
// Usage: node llama_next_token.mjs MODEL.gguf [TOKEN...]
//   TOKEN...  the prompt's token ids; default 15043 3186 ("Hello world" in llama's vocabulary,
//             without BOS: no BOS is added, the tokens are evaluated as given).
// The packages are looked up in $GGUFS_TEST_NODE_MODULES, else where scripts/install-deps puts
// them. On error: a one-line message on stderr and exit code 1. llama.cpp's own log lines go to
// stderr, so stdout holds only the JSON line.
import { createRequire } from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";

const kDefaultModules = "/var/cache/ggufs-tests/node/node_modules";
const kDefaultPrompt = [15043, 3186];

// ES modules ignore NODE_PATH, so the package is resolved from the install folder explicitly
// (a require rooted in that folder finds `<dir>/node_modules/x` and, when `dir` itself is a
// node_modules folder, `<dir>/x`).
async function importFrom(dir, name) {
  const require = createRequire(path.join(dir, "_resolve_from_here.js"));
  return import(pathToFileURL(require.resolve(name)).href);
}

async function main() {
  const [modelPath, ...tokenArgs] = process.argv.slice(2);
  if (!modelPath) throw new Error("usage: llama_next_token.mjs MODEL.gguf [TOKEN...]");
  const tokens = tokenArgs.length ? tokenArgs.map(Number) : kDefaultPrompt;
  if (tokens.some((t) => !Number.isInteger(t) || t < 0)) {
    throw new Error(`token ids must be non-negative integers: ${tokenArgs.join(" ")}`);
  }
  const modules = process.env.GGUFS_TEST_NODE_MODULES || kDefaultModules;
  const { getLlama, LlamaLogLevel } = await importFrom(modules, "node-llama-cpp");

  // Only the prebuilt binary from the npm package: never build llama.cpp or download its source
  // (the test machines reach no other host), and no GPU, whose results could differ.
  const llama = await getLlama({
    gpu: false,
    build: "never",
    skipDownload: true,
    progressLogs: false,
    logLevel: LlamaLogLevel.warn,
    logger: (level, message) => process.stderr.write(`llama.cpp ${level}: ${message.trimEnd()}\n`),
  });
  try {
    const model = await llama.loadModel({ modelPath });
    const context = await model.createContext({ contextSize: 128 });
    const sequence = context.getSequence();
    // Only the last token asks for output: the sampled next token (temperature 0: the arg max)
    // and the raw logits of the whole vocabulary (a Map sorted from the highest logit down).
    const input = tokens.map((t, i) =>
      i + 1 < tokens.length
        ? t
        : [t, { generateNext: { token: true, logits: true, options: { temperature: 0 } } }],
    );
    const results = await sequence.controlledEvaluate(input);
    const next = results[tokens.length - 1]?.next;
    if (next?.token == null || !next.logits) throw new Error("llama.cpp returned no next token");
    // The logits are float32 values widened to JS numbers: JSON.stringify writes each exactly
    // (the shortest text that reads back to the same double).
    const top5 = [...next.logits.entries()].slice(0, 5);
    process.stdout.write(JSON.stringify({ next: next.token, top5 }) + "\n");
  } finally {
    await llama.dispose();
  }
}

main().catch((err) => {
  const message = String(err?.message ?? err).replace(/\s+/g, " ");
  process.stderr.write(`llama_next_token: ${message}\n`);
  process.exit(1);
});
