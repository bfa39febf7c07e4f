// The functions' EMF metric lines would fill the test output; the tests that read them turn them back on.
process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';
