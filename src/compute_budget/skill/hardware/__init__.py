"""What the devices are and cost: the accelerator catalog with dated prices, the calibrated MFU
priors, time and money from FLOPs, and energy."""
