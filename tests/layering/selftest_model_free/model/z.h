// A model header.
