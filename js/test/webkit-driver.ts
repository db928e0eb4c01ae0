// WebKit for the tests: Debian's WebKitGTK MiniBrowser driven by WebKitWebDriver under a
// virtual X display (xvfb-run), through npm selenium-webdriver; never a downloaded browser.
// `available` is false (and the suites say so, loudly) where any of the three is missing;
// scripts/setup.sh installs webkit2gtk-driver and xvfb.

import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import { Builder, type WebDriver } from 'selenium-webdriver';

const DRIVER = '/usr/bin/WebKitWebDriver';
const MINIBROWSER = ['/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser', '/usr/lib/aarch64-linux-gnu/webkit2gtk-4.1/MiniBrowser'].find((p) => fs.existsSync(p));
const haveXvfb = (() => {
  try {
    execFileSync('sh', ['-c', 'command -v xvfb-run'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();
export const available = fs.existsSync(DRIVER) && MINIBROWSER !== undefined && haveXvfb;

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

/** WebKitWebDriver under a virtual display, and a MiniBrowser session with `features`. */
export async function startWebKit(features: string[]): Promise<{ d: WebDriver; driverProc: ChildProcess }> {
  const port = await freePort();
  const driverProc = spawn('xvfb-run', ['-a', DRIVER, `--port=${port}`], { stdio: 'ignore', detached: true });
  const caps = {
    browserName: 'MiniBrowser',
    'webkitgtk:browserOptions': { binary: MINIBROWSER, args: ['--automation', `--features=${features.join(',')}`] },
  };
  let lastError: unknown;
  for (let attempt = 0; attempt < 40; attempt++) {
    try {
      const d = await new Builder().usingServer(`http://127.0.0.1:${port}`).withCapabilities(caps).build();
      await d.manage().setTimeouts({ script: 600_000 });
      return { d, driverProc };
    } catch (e) {
      lastError = e;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  throw lastError;
}

export async function stopWebKit(d: WebDriver | undefined, driverProc: ChildProcess | undefined): Promise<void> {
  await d?.quit().catch(() => {});
  if (driverProc?.pid) {
    try {
      process.kill(-driverProc.pid, 'SIGTERM'); // xvfb-run, its X server and the driver
    } catch {
      // already gone
    }
  }
}

