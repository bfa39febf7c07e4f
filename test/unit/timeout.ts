// A few unit tests talk to the platform simulator over HTTP (the adapters' contract tests); Shopify's
// schema is built on their first call, which takes seconds on a loaded two-core machine. Set here
// (after the framework is installed) because jest 30 reads `testTimeout` from the global config
// only: a project's own `testTimeout` is ignored, and the unit tests ran with jest's 5 s.
jest.setTimeout(20_000);
