"""What a person reads: a results folder's tables, report.md, plots, sweep reports, and one
game shown round by round."""
