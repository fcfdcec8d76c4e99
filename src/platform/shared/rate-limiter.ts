import type { Cluster, Redis } from 'ioredis';

// One server or a cluster (platform/runtime's RedisClient; runtime imports shared, so not from there).
type RedisClient = Redis | Cluster;

// A token bucket in one Lua call: atomic across API processes, and it allows the documented burst
// on top of a steady rate, which a fixed-window counter cannot express.
const TOKEN_BUCKET = `
local key = KEYS[1]
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local now_ms = tonumber(ARGV[3])
local state = redis.call('HMGET', key, 'tokens', 'at')
local tokens = tonumber(state[1]) or burst
local at = tonumber(state[2]) or now_ms
tokens = math.min(burst, tokens + (math.max(0, now_ms - at) * rate / 1000))
local allowed = 0
if tokens >= 1 then
  tokens = tokens - 1
  allowed = 1
end
redis.call('HSET', key, 'tokens', tostring(tokens), 'at', tostring(now_ms))
redis.call('PEXPIRE', key, math.ceil(burst * 1000 / rate) + 1000)
return { allowed, tostring(tokens) }
`;

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until one request is allowed again (0 when allowed). */
  retryAfterSeconds: number;
  /** Seconds until the bucket is full again. */
  resetSeconds: number;
}

export class RateLimiter {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    private readonly perSecond: number,
    private readonly burst: number,
  ) {
    redis.defineCommand('tokenBucket', { numberOfKeys: 1, lua: TOKEN_BUCKET });
  }

  async take(clientId: string, now = Date.now()): Promise<RateDecision> {
    const [allowed, tokensText] = (await (this.redis as any).tokenBucket(`${this.prefix}:ratelimit:${clientId}`, this.perSecond, this.burst, now)) as [number, string];
    const tokens = Number(tokensText);
    const remaining = Math.floor(tokens);
    return {
      allowed: allowed === 1,
      limit: this.burst,
      remaining,
      retryAfterSeconds: allowed === 1 ? 0 : Math.max(1, Math.ceil((1 - tokens) / this.perSecond)),
      resetSeconds: Math.ceil((this.burst - tokens) / this.perSecond),
    };
  }
}

// Failure buckets for the token endpoint: checking reads without spending, and only a failed
// client authentication spends, so clients that authenticate correctly never use them up. Every
// bucket refills completely over one window. Returns how long (ms) until each bucket holds one
// failure again; 0 means none of them is empty.
const FAILURE_BUCKETS = `
local charge = ARGV[1] == 'charge'
local now_ms = tonumber(ARGV[2])
local window_ms = tonumber(ARGV[3])
local wait_ms = 0
for i, key in ipairs(KEYS) do
  local capacity = tonumber(ARGV[3 + i])
  local per_ms = capacity / window_ms
  local state = redis.call('HMGET', key, 'tokens', 'at')
  local tokens = tonumber(state[1]) or capacity
  local at = tonumber(state[2]) or now_ms
  tokens = math.min(capacity, tokens + (math.max(0, now_ms - at) * per_ms))
  if charge then
    tokens = math.max(0, tokens - 1)
    redis.call('HSET', key, 'tokens', tostring(tokens), 'at', tostring(now_ms))
    redis.call('PEXPIRE', key, window_ms + 1000)
  end
  if tokens < 1 then
    wait_ms = math.max(wait_ms, math.ceil((1 - tokens) / per_ms))
  end
end
return wait_ms
`;

export interface FailureBucket {
  key: string;
  /** Failures allowed in a burst; the bucket refills at this many per window. */
  capacity: number;
}

/** Counts failures (failed logins) per key in Redis token buckets and says when a key must wait. */
export class FailureLimiter {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    private readonly windowSeconds: number,
  ) {
    redis.defineCommand('failureBuckets', { lua: FAILURE_BUCKETS });
  }

  /** Seconds the caller must wait because one of its buckets is empty; 0 when none is. */
  async retryAfterSeconds(buckets: readonly FailureBucket[], now = Date.now()): Promise<number> {
    return this.run('check', buckets, now);
  }

  async recordFailure(buckets: readonly FailureBucket[], now = Date.now()): Promise<void> {
    await this.run('charge', buckets, now);
  }

  private async run(mode: 'check' | 'charge', buckets: readonly FailureBucket[], now: number): Promise<number> {
    if (buckets.length === 0) return 0;
    const waitMs = (await (this.redis as any).failureBuckets(
      buckets.length,
      ...buckets.map((bucket) => `${this.prefix}:${bucket.key}`),
      mode,
      now,
      this.windowSeconds * 1000,
      ...buckets.map((bucket) => bucket.capacity),
    )) as number;
    return Math.ceil(waitMs / 1000);
  }
}
