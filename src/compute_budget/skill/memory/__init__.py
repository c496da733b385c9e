"""Will it fit: model states under ZeRO, activations by training stack, LoRA and quantized
bases, optimizer state, and the search for the cheapest layout that fits."""
