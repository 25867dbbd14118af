-- Shared by every scenario: report the run as one JSON line wrk prints at the end. Errors are
-- answers other than 2xx/3xx and broken connections; timeouts (no answer within wrk's 2 s)
-- are counted apart.
done = function(summary, latency, requests)
  local errors = summary.errors.connect + summary.errors.read + summary.errors.write
    + summary.errors.status
  io.write(string.format(
    'RESULT {"requests": %d, "duration_us": %d, "errors": %d, "timeouts": %d, '
      .. '"p50_us": %d, "p99_us": %d}\n',
    summary.requests, summary.duration, errors, summary.errors.timeout,
    latency:percentile(50), latency:percentile(99)))
end
