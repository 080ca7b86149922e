// CronJob manifests: a good one becomes the request the store writes, with the CRD's defaults;
// bad ones are refused with every problem's path and line (the schedule and zone through the cron
// math that will fire them); the CRD declares the defaults the code fills in and carries the Job
// CRD's spec schema as its jobTemplate.spec; an occurrence's Job is named and due from its time.
import { describe, expect, it } from 'vitest';
import { readCronJobSubmission } from '../../src/api/validation/cronjob.js';
import {
  CRONJOB_LABEL,
  CRONJOB_SPEC_DEFAULTS,
  occurrenceJob,
  occurrenceWorkflow,
  scheduleOf,
} from '../../src/domain/cronjob-occurrence.js';
import { readCrdSchema } from '../../src/api/validation/schema.js';
import { detailsOf } from '../helpers/validation.js';

function cronJob(spec: string, name = 'nightly'): string {
  return `apiVersion: fencer.dev/v1
kind: CronJob
metadata:
  name: ${name}
  namespace: team-a
spec:
${spec}`;
}

const TEMPLATE = `  jobTemplate:
    metadata:
      labels: { team: data }
    spec:
      resources: { cpu: 500m, memory: 256Mi }
      duration: 30s
`;

describe('a CronJob manifest', () => {
  it('becomes a request with the CRD defaults in its spec', () => {
    const request = readCronJobSubmission(
      cronJob(`  schedule: "0 9 * * MON-FRI"\n  timeZone: America/New_York\n${TEMPLATE}`),
      undefined,
    );
    expect(request).toMatchObject({ namespace: 'team-a', name: 'nightly', labels: {} });
    expect(request.spec).toMatchObject({
      ...CRONJOB_SPEC_DEFAULTS,
      schedule: '0 9 * * MON-FRI',
      timeZone: 'America/New_York',
    });
    expect(scheduleOf(request.spec)).toEqual({
      pattern: '0 9 * * MON-FRI',
      timeZone: 'America/New_York',
      seconds: false,
    });
  });

  it.each([
    ['schedule: "0 0 30 2 *"', 'spec.schedule', /never fires/, 7],
    ['schedule: "*/5 * * *"', 'spec.schedule', /fields/, 7],
    ['schedule: "@reboot"', 'spec.schedule', /@reboot/, 7],
    ['schedule: "@daily"\n  timeZone: Europe/Nowhere', 'spec.timeZone', /Europe\/Nowhere/, 8],
    ['schedule: "@daily"\n  catchUp: sometimes', 'spec.catchUp', /latest/, 8],
    ['schedule: "@daily"\n  startingDeadlineSeconds: -1', 'spec.startingDeadlineSeconds', /0/, 8],
  ])('refuses %s at %s (line %#)', (spec, path, message, line) => {
    expect(detailsOf(() => readCronJobSubmission(cronJob(`  ${spec}\n${TEMPLATE}`), undefined))).toEqual([
      expect.objectContaining({ path, message: expect.stringMatching(message), line }),
    ]);
  });

  it('checks its jobTemplate.spec as a Job spec, every problem at once', () => {
    const bad = cronJob(
      '  schedule: "@daily"\n  jobTemplate:\n    spec:\n      resources: { cpu: lots, memory: 256Mi }\n      duration: soon\n      startAt: "2026-01-01T00:00:00Z"\n',
    );
    expect(
      detailsOf(() => readCronJobSubmission(bad, undefined))
        .map((d) => d.path)
        .sort(),
    ).toEqual([
      'spec.jobTemplate.spec.duration',
      'spec.jobTemplate.spec.resources.cpu',
      'spec.jobTemplate.spec.startAt',
    ]);
  });

  it('needs a name short enough for its Jobs, and refuses generateName', () => {
    expect(
      detailsOf(() => readCronJobSubmission(cronJob(`  schedule: "@daily"\n${TEMPLATE}`, 'n'.repeat(53)), undefined)),
    ).toEqual([expect.objectContaining({ path: 'metadata.name', message: expect.stringMatching(/52/) })]);
  });
});

describe('a workflowTemplate', () => {
  const WORKFLOW = `  workflowTemplate:
    spec:
      jobs:
        - name: extract
          template: { resources: { cpu: 500m, memory: 256Mi }, duration: 30s }
        - name: load
          needs: [extract]
          template: { resources: { cpu: 500m, memory: 256Mi }, duration: 30s }
`;

  it('is accepted instead of a jobTemplate, and each occurrence makes a Workflow named from its time, every job due then', () => {
    const request = readCronJobSubmission(cronJob(`  schedule: "*/5 * * * * *"\n${WORKFLOW}`), undefined);
    const at = new Date('2026-03-08T07:00:05Z');
    const workflow = occurrenceWorkflow(request, at);
    expect(workflow).toMatchObject({
      namespace: 'team-a',
      name: `nightly-${at.getTime() / 1000}`,
      labels: { [CRONJOB_LABEL]: 'nightly' },
    });
    expect(workflow.jobs.map((j) => [j.name, j.startAt, j.needs])).toEqual([
      [`nightly-${at.getTime() / 1000}-extract`, at.toISOString(), []],
      [`nightly-${at.getTime() / 1000}-load`, at.toISOString(), [`nightly-${at.getTime() / 1000}-extract`]],
    ]);
  });

  it('is exactly one of the two templates', () => {
    expect(
      detailsOf(() => readCronJobSubmission(cronJob(`  schedule: "@daily"\n${TEMPLATE}${WORKFLOW}`), undefined)),
    ).toEqual([
      expect.objectContaining({
        path: 'spec.workflowTemplate',
        message: 'exactly one of jobTemplate and workflowTemplate',
      }),
    ]);
    expect(detailsOf(() => readCronJobSubmission(cronJob('  schedule: "@daily"\n'), undefined))).toEqual([
      expect.objectContaining({
        path: 'spec.jobTemplate',
        message: expect.stringMatching(/jobTemplate or workflowTemplate/),
      }),
    ]);
  });

  it('is checked as a Workflow, its problems where the CronJob has them, lines included', () => {
    const bad = WORKFLOW.replace(
      'cpu: 500m, memory: 256Mi }, duration: 30s }\n        - name: load',
      'cpu: lots, memory: 256Mi }, duration: 30s }\n        - name: load',
    );
    expect(detailsOf(() => readCronJobSubmission(cronJob(`  schedule: "@daily"\n${bad}`), undefined))).toEqual([
      expect.objectContaining({ path: 'spec.workflowTemplate.spec.jobs[0].template.resources.cpu', line: 12 }),
    ]);
    // <cronjob>-<10 digits>-<job> must fit in 63: a long CronJob name leaves its jobs no room.
    const long = detailsOf(() =>
      readCronJobSubmission(cronJob(`  schedule: "@daily"\n${WORKFLOW}`, 'n'.repeat(48)), undefined),
    );
    expect(long.length).toBeGreaterThan(0);
    expect(long.every((d) => d.path === 'metadata.name' || d.path.startsWith('spec.workflowTemplate.spec.jobs'))).toBe(
      true,
    );
  });
});

describe("an occurrence's Job", () => {
  const request = readCronJobSubmission(cronJob(`  schedule: "*/5 * * * * *"\n${TEMPLATE}`), undefined);
  const at = new Date('2026-03-08T07:00:05Z');

  it('is named from the scheduled time, labelled with its CronJob, due at that time', () => {
    const job = occurrenceJob(request, scheduleOf(request.spec), at);
    expect(job).toMatchObject({
      namespace: 'team-a',
      name: `nightly-${at.getTime() / 1000}`,
      labels: { team: 'data', [CRONJOB_LABEL]: 'nightly' },
      startAt: at.toISOString(),
      startAfterMs: null,
      cpuMillis: 500,
      durationMs: 30_000,
    });
    expect(occurrenceJob(request, scheduleOf(request.spec), at).name).toBe(job.name);
  });

  it('broken (cron-name): a fresh name each time', () => {
    const a = occurrenceJob(request, scheduleOf(request.spec), at, true);
    const b = occurrenceJob(request, scheduleOf(request.spec), at, true);
    expect(a.name).not.toBe(b.name);
  });
});

describe('the CronJob CRD', () => {
  const schema = readCrdSchema('crds/cronjob.yaml') as any;
  const spec = schema.properties.spec.properties;

  it("carries the Job CRD's spec schema as its jobTemplate.spec, and the Workflow CRD's as its workflowTemplate.spec", () => {
    expect(spec.jobTemplate.properties.spec).toEqual((readCrdSchema('crds/job.yaml') as any).properties.spec);
    expect(spec.workflowTemplate.properties.spec).toEqual((readCrdSchema('crds/workflow.yaml') as any).properties.spec);
  });

  it('declares the defaults the code fills in', () => {
    for (const [field, value] of Object.entries(CRONJOB_SPEC_DEFAULTS))
      expect(spec[field].default, field).toEqual(value);
  });
});
