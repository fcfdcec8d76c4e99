import type { Redis } from 'ioredis';

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
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly perSecond: number,
    private readonly burst: number,
  ) {
    redis.defineCommand('tokenBucket', { numberOfKeys: 1, lua: TOKEN_BUCKET });
  }

  async take(clientId: string, now = Date.now()): Promise<RateDecision> {
    const [allowed, tokensText] = (await (this.redis as any).tokenBucket(
      `${this.prefix}:ratelimit:${clientId}`,
      this.perSecond,
      this.burst,
      now,
    )) as [number, string];
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
