// What `get workflows` and `describe workflow` print: pure functions of the objects and a clock.
import type { Workflow } from '../domain/resources.js';
import { components } from '../workflows/dag.js';
import { renderTable } from '../report/table.js';
import { humanAge, render, type RenderOptions } from './output.js';

export function renderWorkflows(workflows: Workflow[], options: RenderOptions): string {
  return render(workflows, 'Workflow', options, () => workflowsTable(workflows, options));
}

function workflowsTable(workflows: Workflow[], { now, allNamespaces }: RenderOptions): string {
  const header = ['NAME', 'PHASE', 'JOBS', 'SUCCEEDED', 'FAILED', 'RUNNING', 'AGE'];
  if (allNamespaces) header.unshift('NAMESPACE');
  const rows = workflows.map((w) => {
    const jobs = w.status?.jobs ?? [];
    const count = (...phases: string[]) => String(jobs.filter((j) => phases.includes(j.phase)).length);
    const row = [
      w.metadata.name,
      w.status?.phase ?? 'Running',
      String(jobs.length),
      count('Succeeded'),
      count('Failed', 'Dead'),
      count('Assigned', 'Running'),
      humanAge(w.metadata.creationTimestamp, now),
    ];
    if (allNamespaces) row.unshift(w.metadata.namespace ?? 'default');
    return row;
  });
  return renderTable(header, rows);
}

/**
 * `fencer describe workflow`: the workflow, then its plan: each stage (Kahn's algorithm) with its
 * jobs, their needs and phases, then its independent parts (weakly connected components): a
 * failure can only skip jobs of its own part.
 */
export function describeWorkflow(workflow: Workflow, now: Date): string {
  const status = workflow.status;
  const jobs = status?.jobs ?? [];
  const needsOf = new Map(workflow.spec.jobs.map((j) => [j.name, j.needs ?? []]));
  const lines = [
    `Name:         ${workflow.metadata.name}`,
    `Namespace:    ${workflow.metadata.namespace ?? 'default'}`,
    `Phase:        ${status?.phase ?? 'Running'}`,
    `Pool:         ${workflow.spec.pool ?? '<none>'}`,
    `Created:      ${workflow.metadata.creationTimestamp ?? '<unknown>'} (${humanAge(workflow.metadata.creationTimestamp, now)} ago)`,
  ];
  if (status?.completionTime) lines.push(`Completed:    ${status.completionTime}`);
  const reason = status?.conditions[0];
  if (reason) lines.push(`Reason:       ${reason.reason}: ${reason.message}`);
  lines.push('Plan:');
  const stageCount = jobs.reduce((most, j) => Math.max(most, j.stage + 1), 0);
  const rows: string[][] = [];
  for (let stage = 0; stage < stageCount; stage++) {
    for (const job of jobs.filter((j) => j.stage === stage)) {
      const needs = needsOf.get(job.name) ?? [];
      rows.push([String(stage), job.name, needs.length > 0 ? needs.join(',') : '-', job.phase, job.reason ?? '']);
    }
  }
  lines.push(indent(renderTable(['STAGE', 'JOB', 'NEEDS', 'PHASE', 'REASON'], rows)));
  const parts = components(workflow.spec.jobs.map((j) => ({ name: j.name, needs: j.needs ?? [], durationMs: 0 })));
  lines.push(`Independent parts: ${parts.length}`);
  parts.forEach((part, i) => lines.push(`  ${i + 1}: ${part.join(', ')}`));
  return lines.join('\n') + '\n';
}

function indent(text: string): string {
  return text
    .trimEnd()
    .split('\n')
    .map((line) => `  ${line}`)
    .join('\n');
}
