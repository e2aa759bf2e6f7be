/**
 * The GPU worker deployment (infra/k8s-gpu-worker.yaml): its workers run the GPU image on WebGPU, and KEDA scales
 * them from zero on the lists BullMQ really writes. The key names are checked against a real Redis: a job the
 * worker's queue enqueues shows up in the list the scaler reads. (No cluster here: KEDA itself is not run.)
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { parseAllDocuments } from 'yaml';
import { BullJobQueue } from '../src/jobs/bullmq-queue.js';
import { ROOT } from './helpers/fixtures.js';
import { assertRedisReachable, TEST_REDIS } from './helpers/redis.js';

interface Manifest {
  kind: string;
  metadata: { name: string };
  spec: Record<string, unknown> & {
    template?: {
      spec: {
        containers: { env: { name: string; value: string }[]; resources: { limits: Record<string, unknown> } }[];
      };
    };
    scaleTargetRef?: { name: string };
    minReplicaCount?: number;
    triggers?: { type: string; metadata: Record<string, string> }[];
  };
}

const docs = parseAllDocuments(readFileSync(join(ROOT, 'infra', 'k8s-gpu-worker.yaml'), 'utf8')).map((d) => {
  assert.deepEqual(d.errors, []);
  return d.toJS() as Manifest;
});
const deployment = docs.find((d) => d.kind === 'Deployment');
const scaled = docs.find((d) => d.kind === 'ScaledObject');
const env = Object.fromEntries((deployment?.spec.template?.spec.containers[0].env ?? []).map((e) => [e.name, e.value]));

describe('the GPU worker deployment', () => {
  it('runs workers on WebGPU with a GPU each and the Vulkan driver mounted (graphics capability)', () => {
    assert.ok(deployment);
    assert.equal(env.SPECULA_ROLE, 'worker');
    assert.equal(env.SPECULA_DEVICE, 'webgpu');
    assert.match(env.NVIDIA_DRIVER_CAPABILITIES, /graphics/);
    assert.equal(deployment.spec.template?.spec.containers[0].resources.limits['nvidia.com/gpu'], 1);
  });

  it('scales that deployment from zero on queued and running jobs', () => {
    assert.ok(scaled);
    assert.equal(scaled.spec.scaleTargetRef?.name, deployment?.metadata.name);
    assert.equal(scaled.spec.minReplicaCount, 0);
    const lists = (scaled.spec.triggers ?? []).filter((t) => t.type === 'redis').map((t) => t.metadata.listName);
    const prefix = env.SPECULA_REDIS_PREFIX;
    assert.deepEqual(lists.sort(), [`${prefix}:bull:specula-parse:active`, `${prefix}:bull:specula-parse:wait`]);
  });

  it("reads the list a queued job really lands in (real Redis, the worker's own queue)", async () => {
    await assertRedisReachable();
    const wait = scaled?.spec.triggers?.find((t) => t.metadata.listName.endsWith(':wait'))?.metadata.listName ?? '';
    // The manifest's key under a prefix of this test's own, so nothing else in this Redis is touched.
    const prefix = `test-${randomUUID().slice(0, 8)}`;
    const key = wait.replace(new RegExp(`^${env.SPECULA_REDIS_PREFIX}:`), `${prefix}:`);
    const q = new BullJobQueue({
      url: TEST_REDIS,
      prefix,
      attempts: 1,
      tenantConcurrency: 1,
      retentionSeconds: 60,
      lockMs: 5000,
    });
    const redis = new Redis(TEST_REDIS);
    try {
      await q.enqueue('job-1');
      await q.enqueue('job-2');
      assert.equal(await redis.type(key), 'list');
      assert.equal(await redis.llen(key), 2, 'what KEDA reads as the queue depth');
    } finally {
      await q.close();
      const keys = await redis.keys(`${prefix}:*`);
      if (keys.length) await redis.del(...keys);
      redis.disconnect();
    }
  });
});
