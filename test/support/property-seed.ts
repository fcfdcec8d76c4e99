import fc from 'fast-check';

// Every property test in `npm test` runs with this seed, so a CI run is reproducible and a failure
// replays exactly (fast-check prints the seed and the path of the failing case). `FC_SEED=n npm test`
// tries another stream; test/fuzz/ runs fresh seeds for as long as you like.
export const PROPERTY_SEED = Number(process.env.FC_SEED ?? 20_261_123);

fc.configureGlobal({ seed: PROPERTY_SEED });
