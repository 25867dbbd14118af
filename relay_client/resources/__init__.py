"""One module per API resource, each with its sync and async twin side by side."""
