#!/usr/bin/env node
import { leaveOutOptimizingCompiler } from './optimizing-compiler.js';

// Before the program's modules load: V8 still optimizes functions compiled while the flag was on.
if (process.argv[2] === 'worker') leaveOutOptimizingCompiler();
const { runCli } = await import('./program.js');
process.exitCode = await runCli(process.argv.slice(2));
