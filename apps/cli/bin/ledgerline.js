#!/usr/bin/env node
// `npx ledgerline <command>` after `npm install`: registers tsx's loader in this
// process and runs the TypeScript entry, so the command needs no build step.
'use strict';
const { register } = require('tsx/cjs/api');
const { join } = require('node:path');

register();
require(join(__dirname, '..', 'src', 'main.ts'));
