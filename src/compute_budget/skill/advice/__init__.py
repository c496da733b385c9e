"""Whether to launch: the gain and its noise, the findings and the verdict, kill criteria,
cheaper alternatives, and candidates compared."""
