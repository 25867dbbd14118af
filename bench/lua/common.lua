-- Shared by every scenario: report the run as one JSON line wrk prints at the end.
done = function(summary, latency, requests)
  local errors = summary.errors.connect + summary.errors.read + summary.errors.write
    + summary.errors.status + summary.errors.timeout
  io.write(string.format(
    'RESULT {"requests": %d, "duration_us": %d, "errors": %d, "p50_us": %d, "p99_us": %d}\n',
    summary.requests, summary.duration, errors,
    latency:percentile(50), latency:percentile(99)))
end
