// The live dashboard (/ui) in a real browser: Debian's Chromium driven by playwright-core (which
// .ci/run installs; skipped, saying why, without it) on a cluster of real processes. The page is
// loaded from the leader; jobs submitted through the API must appear and change phase on it
// without a reload, pushed over Server-Sent Events; when the leader (the page's own origin) is
// killed, the page must read from another replica and show the new epoch; with the push channel
// blocked, polling must keep it current. Screenshots go to test/artifacts/.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { plainOnLoopback } from '../../src/net/tls.js';
import { Cluster } from '../../src/simulator/local-cluster.js';
import { DEFAULT_TIMINGS } from '../../src/config.js';
import { projectRoot } from '../../src/paths.js';
import { freshDatabase, type TestDatabase } from '../helpers/database.js';
import { eventually } from '../helpers/eventually.js';
import { jobYaml, submit } from '../helpers/jobs.js';
import { workflowYaml } from '../helpers/workflows.js';
import { adminFetch } from '../helpers/auth.js';

const CHROMIUM = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => existsSync(p));
const SKIP = CHROMIUM ? '' : ' (skipped: no Chromium; apt-get install chromium)';
const ARTIFACTS = join(projectRoot(), 'test', 'artifacts');

let t: TestDatabase;
let cluster: Cluster;
let home: string;
let browser: Browser;

// What the page showed, recorded in the page as it happened (a MutationObserver), so no phase
// shown between two of the test's looks is missed: every phase each job row had, every mode
// of the live indicator.
const RECORDER = `
  window.__seen = {};
  window.__dag = {};
  window.__modes = [];
  window.__loads = (window.__loads || 0) + 1;
  addEventListener('DOMContentLoaded', () => {
    const record = () => {
      for (const row of document.querySelectorAll('tr[data-job]')) {
        const seen = (window.__seen[row.dataset.job] ||= []);
        if (seen[seen.length - 1] !== row.dataset.phase) seen.push(row.dataset.phase);
      }
      for (const box of document.querySelectorAll('[data-testid^="workflow-"] g[data-job]')) {
        const key = box.closest('[data-testid]').dataset.testid + '/' + box.dataset.job;
        const seen = (window.__dag[key] ||= []);
        if (seen[seen.length - 1] !== box.dataset.phase) seen.push(box.dataset.phase);
      }
      const mode = document.querySelector('[data-testid="live"]').dataset.mode;
      if (window.__modes[window.__modes.length - 1] !== mode) window.__modes.push(mode);
    };
    new MutationObserver(record).observe(document.body, { subtree: true, childList: true, attributes: true });
    record();
  });
`;

async function open(url: string, blockPush = false): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  if (blockPush) await page.route('**/api/v1/changes', (route) => route.abort());
  await page.addInitScript(RECORDER);
  // The link `cluster up` prints: plain HTTP on loopback (the browser knows nothing of the
  // cluster's CA), the admin token in the fragment, which the page keeps in its tab.
  await page.goto(`${plainOnLoopback(url)}/ui/#token=${process.env.FENCER_TOKEN}`);
  return page;
}

const seen = (page: Page, job: string) =>
  page.evaluate(
    (key) => (window as unknown as { __seen: Record<string, string[]> }).__seen[key] ?? [],
    `default/${job}`,
  );
const dagSeen = (page: Page, key: string) =>
  page.evaluate((k) => (window as unknown as { __dag: Record<string, string[]> }).__dag[k] ?? [], key);
const modes = (page: Page) => page.evaluate(() => (window as unknown as { __modes: string[] }).__modes);
const text = (page: Page, testId: string) => page.locator(`[data-testid="${testId}"]`).first().textContent();

async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
}

beforeAll(async () => {
  t = await freshDatabase('dashboard');
  home = mkdtempSync(join(tmpdir(), 'fencer-dashboard-'));
  cluster = await Cluster.start({
    replicas: 3,
    nodes: 3,
    nodeCpu: '4',
    nodeMemory: '8Gi',
    databaseUrl: t.url,
    home,
    timings: DEFAULT_TIMINGS,
    restart: false,
  });
  if (!SKIP) browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await cluster?.stop();
  await t?.close();
  if (home) rmSync(home, { recursive: true, force: true });
});

describe('reads from other origins', () => {
  it("answers GETs to pages of the replicas' own origins, and to no other site", async () => {
    // The origins of the pages the dashboard's link opens: plain HTTP on loopback.
    const [a, b] = cluster.replicaUrls.map(plainOnLoopback) as [string, string];
    const from = async (origin: string) => (await adminFetch(`${a}/api/v1/status`, { headers: { origin } })).headers;
    const replica = await from(b);
    expect(replica.get('access-control-allow-origin')).toBe(b);
    expect(replica.get('vary')).toBe('Origin');
    expect((await from('http://evil.example')).get('access-control-allow-origin')).toBeNull();
    expect((await from('http://127.0.0.1:1')).get('access-control-allow-origin')).toBeNull();
    const feed = await adminFetch(`${a}/api/v1/changes`, { headers: { origin: 'http://evil.example' } });
    expect(feed.headers.get('access-control-allow-origin')).toBeNull();
    await feed.body?.cancel();
  });
});

describe(`the dashboard in Chromium${SKIP}`, () => {
  let page: Page;
  let leader: { name: string; epoch: number };

  it.skipIf(!!SKIP)('draws a workflow as its DAG and a CronJob with its next and recent runs', async () => {
    leader = await eventually(() => cluster.leader(), { what: 'a leader' });
    page = await open(cluster.replicaUrl(leader.name));
    const post = async (path: string, yaml: string) => {
      const res = await adminFetch(`${cluster.replicaUrls[1]}${path}`, {
        method: 'POST',
        body: yaml,
        headers: { 'content-type': 'application/yaml' },
      });
      expect(res.status, await res.clone().text()).toBe(201);
    };
    // extract and load, whose boxes must be seen Running, run longer than the page may wait
    // between two reads (5 s, src/ui/app.ts) plus two slow reads; the others are short.
    const runs = (job: string) => (job === 'extract' || job === 'load' ? '8s' : '1s');
    await post(
      '/api/v1/workflows',
      workflowYaml(
        'etl',
        [
          { name: 'extract' },
          { name: 'clean', needs: ['extract'] },
          { name: 'enrich', needs: ['extract'] },
          { name: 'load', needs: ['clean', 'enrich'] },
        ].map((j) => ({ ...j, template: { duration: runs(j.name) } })),
      ),
    );
    await post(
      '/api/v1/cronjobs',
      `apiVersion: fencer.dev/v1
kind: CronJob
metadata:
  name: tick
spec:
  schedule: "*/2 * * * * *"
  timeZone: Europe/Berlin
  jobTemplate:
    spec:
      resources: { cpu: 250m, memory: 128Mi }
      duration: 500ms
`,
    );
    const dag = page.locator('[data-testid="workflow-etl"]');
    await eventually(async () => (await dag.locator('g[data-phase="Succeeded"]').count()) === 4, {
      what: 'the workflow DAG drawn, every job Succeeded',
      timeoutMs: 60_000,
    });
    // extract stands left of clean and enrich, which stand left of load; one edge per need.
    const x = async (job: string) => Number(await dag.locator(`g[data-job="${job}"] rect`).getAttribute('x'));
    expect(await x('extract')).toBeLessThan(await x('clean'));
    expect(await x('clean')).toBe(await x('enrich'));
    expect(await x('enrich')).toBeLessThan(await x('load'));
    expect(await dag.locator('path').count()).toBe(4);
    // Each box changed with its job, not only when the workflow closed.
    for (const job of ['extract', 'load']) expect(await dagSeen(page, `workflow-etl/${job}`), job).toContain('Running');
    const tick = page.locator('[data-testid="cronjobs"] tr[data-cronjob="tick"]');
    await eventually(async () => (await tick.locator('.runs span[data-phase="Succeeded"]').count()) >= 2, {
      what: 'two runs of the CronJob shown',
      timeoutMs: 30_000,
    });
    expect(await tick.textContent()).toContain('Europe/Berlin');
    expect(await tick.locator('td').nth(2).textContent()).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC \(in \d+s\)$/);
    await screenshot(page, 'dashboard-workflows');
  });

  it.skipIf(!!SKIP)(
    'shows the leader and every node; jobs appear and change phase without a reload, pushed',
    async () => {
      await eventually(async () => (await page.getAttribute('[data-testid="live"]', 'data-mode')) === 'push', {
        what: 'the push channel open',
      });
      await eventually(
        async () =>
          (await text(page, 'leader-name')) === leader.name && (await text(page, 'epoch')) === String(leader.epoch),
        { what: 'the leader and its epoch shown' },
      );
      for (const node of cluster.nodeNames)
        expect(await page.locator(`[data-testid="node-${node}"]`).count(), node).toBe(1);

      const names = ['web-build', 'web-test', 'data-load', 'data-train'];
      for (const name of names)
        expect(await submit(cluster.replicaUrls, jobYaml(name, { cpu: '2', memory: '2Gi', duration: '4s' }))).toBe(201);
      // A running job fills its node's box.
      await eventually(async () => (await page.locator('[data-testid^="node-"] .bar span[data-job]').count()) > 0, {
        what: 'a node box filled by a running job',
      });
      await screenshot(page, 'dashboard');
      await eventually(
        async () => (await Promise.all(names.map((n) => seen(page, n)))).every((s) => s.at(-1) === 'Succeeded'),
        { what: 'every job shown Succeeded', timeoutMs: 60_000 },
      );
      for (const name of names) {
        const phases = await seen(page, name);
        expect(phases, name).toContain('Running'); // shown while it ran, not only at the end
        expect(phases.at(-1), name).toBe('Succeeded');
      }
      expect(await modes(page)).toEqual(['connecting', 'push']); // never fell back to polling
      expect(await page.evaluate(() => (window as unknown as { __loads: number }).__loads)).toBe(1);

      // A job's detail: its history, with the epoch and node of its run.
      await page.locator('tr[data-job="default/web-build"]').click();
      await eventually(async () => ((await text(page, 'job-history')) ?? '').includes('Succeeded'), {
        what: 'the job history shown',
      });
      const rows = await page
        .locator('[data-testid="job-history"] tbody tr')
        .evaluateAll((trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent ?? '')));
      const assignment = (reason: string) =>
        rows.filter(([, , r, object]) => object!.startsWith('assignment/') && r === reason);
      expect(assignment('Running')).toHaveLength(1);
      expect(assignment('Assigned')).toHaveLength(1);
      const [, , , object, epoch, node] = assignment('Assigned')[0]!;
      expect(epoch).toBe(String(leader.epoch)); // the epoch that placed it
      expect(cluster.nodeNames).toContain(node);
      expect(assignment('Running')[0]![3]).toBe(object);
      await screenshot(page, 'dashboard-job');
    },
  );

  it.skipIf(!!SKIP)(
    'a leader kill: the page, loaded from that leader, reads from another replica and shows the new epoch',
    async () => {
      // A second page, on a replica that lives on: the election must reach it pushed.
      const follower = await open(cluster.replicaUrls.find((u) => u !== cluster.replicaUrl(leader.name))!);
      await eventually(async () => (await follower.getAttribute('[data-testid="live"]', 'data-mode')) === 'push', {
        what: 'the second page pushed',
      });
      await cluster.kill(leader.name);
      await eventually(
        async () =>
          Number(await text(page, 'epoch')) > leader.epoch && (await text(page, 'leader-name')) !== leader.name,
        { what: 'the new epoch shown', timeoutMs: 30_000 },
      );
      const now = await eventually(() => cluster.leader(), { what: 'a leader' });
      expect(await text(page, 'leader-name')).toBe(now.name);
      await eventually(
        async () =>
          (await page.locator(`[data-testid="events"] tr[data-reason="LeaderElected"]`).allTextContents()).some((row) =>
            row.includes(`${now.name} leads at epoch ${now.epoch}`),
          ),
        { what: 'the election in the events' },
      );
      // The push channel comes back, on a live replica.
      await eventually(async () => (await page.getAttribute('[data-testid="live"]', 'data-mode')) === 'push', {
        what: 'pushed again',
        timeoutMs: 30_000,
      });
      expect(await modes(page)).toEqual(['connecting', 'push', 'polling', 'push']);
      await eventually(
        async () =>
          Number(await text(follower, 'epoch')) === now.epoch && (await text(follower, 'leader-name')) === now.name,
        { what: 'the new epoch on the second page' },
      );
      await eventually(
        async () => (await follower.locator(`[data-testid="events"] tr[data-reason="LeaderElected"]`).count()) === 2,
        { what: 'the election event on the second page' },
      );
      expect(await modes(follower)).toEqual(['connecting', 'push']); // pushed, never polled
      await follower.close();
      expect(
        await submit(cluster.replicaUrls, jobYaml('after-kill', { cpu: '1', memory: '1Gi', duration: '1s' })),
      ).toBe(201);
      await eventually(async () => (await seen(page, 'after-kill')).at(-1) === 'Succeeded', {
        what: 'a job after the kill shown Succeeded',
        timeoutMs: 30_000,
      });
      await screenshot(page, 'dashboard-after-leader-kill');
    },
  );

  it.skipIf(!!SKIP)(
    'with the push channel blocked, polling keeps the page current; when it opens again, pushes resume',
    async () => {
      const url = cluster.replicaUrls.find((u) => u !== cluster.replicaUrl(leader.name))!;
      const blocked = await open(url, true);
      await eventually(async () => (await blocked.getAttribute('[data-testid="live"]', 'data-mode')) === 'polling', {
        what: 'polling',
      });
      expect(
        await submit(cluster.replicaUrls, jobYaml('while-polling', { cpu: '1', memory: '1Gi', duration: '5s' })),
      ).toBe(201);
      await eventually(async () => (await seen(blocked, 'while-polling')).at(-1) === 'Succeeded', {
        what: 'the job shown Succeeded while polling',
        timeoutMs: 30_000,
      });
      expect(await seen(blocked, 'while-polling')).toContain('Running');
      expect(await modes(blocked)).not.toContain('push');
      await screenshot(blocked, 'dashboard-polling');
      await blocked.unroute('**/api/v1/changes');
      await eventually(async () => (await blocked.getAttribute('[data-testid="live"]', 'data-mode')) === 'push', {
        what: 'pushed once the channel opens',
        timeoutMs: 30_000,
      });
      await blocked.close();
    },
  );

  it.skipIf(!!SKIP)(
    'a frozen replica: its page hears nothing, polls another replica and is pushed again from one',
    async () => {
      const url = cluster.replicaUrls.find((u) => u !== cluster.replicaUrl(leader.name))!;
      const frozenName = cluster.replicaNames.find((n) => cluster.replicaUrl(n) === url)!;
      const watched = await open(url);
      await eventually(async () => (await watched.getAttribute('[data-testid="live"]', 'data-mode')) === 'push', {
        what: 'pushed',
      });
      await cluster.freeze(frozenName);
      try {
        // Its stream stays open and silent: the page must tell, and poll elsewhere.
        await eventually(async () => (await modes(watched)).includes('polling'), {
          what: 'polling once the stream went quiet',
          timeoutMs: 30_000,
        });
        expect(
          await submit(
            cluster.replicaUrls.filter((u) => u !== url),
            jobYaml('while-frozen', { cpu: '1', memory: '1Gi', duration: '1s' }),
          ),
        ).toBe(201);
        await eventually(async () => (await seen(watched, 'while-frozen')).at(-1) === 'Succeeded', {
          what: "the job shown Succeeded with the page's replica frozen",
          timeoutMs: 60_000,
        });
        await eventually(async () => (await watched.getAttribute('[data-testid="live"]', 'data-mode')) === 'push', {
          what: 'pushed again',
          timeoutMs: 60_000,
        });
        expect(await modes(watched)).toEqual(['connecting', 'push', 'polling', 'push']);
        expect(await text(watched, 'live')).not.toContain(frozenName);
      } finally {
        await cluster.resume(frozenName);
      }
      await watched.close();
    },
  );
});
