"""Pure maths on what lanes measured: statistics, cost fits, crossings, which lane leads, the anatomy's parts, costs."""
