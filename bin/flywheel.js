#!/usr/bin/env node
// The `flywheel` command: registers the TypeScript loader, then hands over to cli/main.ts.
require('tsx/cjs');
require('../cli/main.ts');
