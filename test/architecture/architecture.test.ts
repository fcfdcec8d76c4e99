import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { readSourceFiles } from './import-graph.ts';
import {
  areasImportingHttp,
  BULLMQ_FOLDERS,
  bullmqOutsideQueueEdges,
  DISTRICTS,
  districtsImportingUpward,
  fileLoops,
  filesOutsideDistricts,
  folderLoops,
  processorsThatAreNotLeaves,
  sqlOutsideRepositories,
  srcImportingJobs,
} from './import-rules.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
const files = readSourceFiles(root, ['src', 'jobs', 'bin', 'test']);
const describeViolations = (violations: { file: string; detail: string }[]) => violations.map((v) => `${v.file}: ${v.detail}`);

describe('the layout docs/developers.md describes', () => {
  it('reads the whole tree', () => {
    expect(files.filter((f) => f.path.startsWith('src/')).length).toBeGreaterThan(100);
    expect(files.some((f) => f.path === 'jobs/index.ts')).toBe(true);
  });

  it('no area imports src/faces/http: services throw domain errors, and only the edges speak HTTP', () => {
    expect(describeViolations(areasImportingHttp(files))).toEqual([]);
  });

  it('src/ never imports jobs/', () => {
    expect(describeViolations(srcImportingJobs(files))).toEqual([]);
  });

  it('processors are leaves: only the registry in jobs/index.ts imports them', () => {
    expect(describeViolations(processorsThatAreNotLeaves(files))).toEqual([]);
  });

  it('only repositories (and the database plumbing) talk SQL', () => {
    expect(describeViolations(sqlOutsideRepositories(files))).toEqual([]);
  });

  it('no areas of src/ import each other in a loop', () => {
    expect(describeViolations(folderLoops(files))).toEqual([]);
  });

  it('no files of src/ import each other in a loop, not even for a type', () => {
    expect(describeViolations(fileLoops(files))).toEqual([]);
  });

  it(`src/ is ${DISTRICTS.length} districts of areas, and no district imports one after it`, () => {
    expect(describeViolations(filesOutsideDistricts(files))).toEqual([]);
    expect(describeViolations(districtsImportingUpward(files))).toEqual([]);
  });

  it(`only ${BULLMQ_FOLDERS.join(', ')} import BullMQ: everything else queues jobs through the job contract`, () => {
    expect(describeViolations(bullmqOutsideQueueEdges(files))).toEqual([]);
    // The rule reads package imports: it sees the ones the allowed folders have.
    expect(files.some((file) => file.path.startsWith('src/faces/workers/') && file.packages.includes('bullmq'))).toBe(true);
  });
});
