"""The Compare tab: the live plot, the crossover map, the summary with its verdict, and the run history."""
