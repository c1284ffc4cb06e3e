"""The model manager: the installed voices and recognizer models, adding them from a file or an address, removing."""
