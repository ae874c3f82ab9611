"""The model: graph IR, operator table and checks, .tflite reader and writer, model I/O files."""
