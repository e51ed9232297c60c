#!/usr/bin/env node
// Thin shim: everything lives in the built CLI.
import { runCli } from '../dist/cli/main.js'

runCli(process.argv)
