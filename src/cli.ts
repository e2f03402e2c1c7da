#!/usr/bin/env node
// The `fastsvc` command (also installed as `svc`): its commands live in src/cli/ (main.ts
// holds the table). This file only hands them the command line.

import { run } from './cli/main.js';

void run(process.argv.slice(2));
