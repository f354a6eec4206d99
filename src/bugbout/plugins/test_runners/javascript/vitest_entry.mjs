// Starts the project's Vitest in this process, so that bugbout's reporter inherits the
// run's descriptors: from 0.19 to 0.2x, Vitest's vitest.mjs is a wrapper that starts its
// command line (dist/cli.mjs) in a child process, which inherits none of them.
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";

const home = resolve("node_modules/vitest");
const wrapped = existsSync(resolve(home, "dist/cli-wrapper.mjs"));
await import(pathToFileURL(resolve(home, wrapped ? "dist/cli.mjs" : "vitest.mjs")).href);
