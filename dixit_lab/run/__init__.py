"""Running experiments: configs, schedules, executors, results folders, resume, replay,
sweeps and tuning."""
