#!/usr/bin/env node
// After `npm install`: rebuild native modules (the PC/SC binding) for Electron, but only where
// Electron's binary is installed (a developer machine). Elsewhere (CI, the headless service)
// the modules stay built for Node and this says so and does nothing.
import { spawnSync } from 'node:child_process';
import { installedElectron } from './electron-binary.js';

if (!installedElectron() || process.env.CI) {
  console.log('postinstall: Electron is not installed here; native modules stay built for Node.');
  process.exit(0);
}
const result = spawnSync('npx', ['electron-builder', 'install-app-deps'], { stdio: 'inherit' });
process.exit(result.status ?? 1);
