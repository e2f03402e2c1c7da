#!/usr/bin/env node
// The `fastsvc` command (also installed as `svc`): its commands live in src/cli/ (main.ts
// holds the table). This file only hands them the command line.
// A closed pipe (`fastsvc explain … | head -1`) ends a command quietly with exit 0, as most
// Unix tools do when their reader went away; `serve` goes on serving (src/cli/output.ts).

import { run } from './cli/main.js';

void run(process.argv.slice(2));
