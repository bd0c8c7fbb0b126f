"""Domain-aware retriever managers: vector stores and BM25 keyword stores."""
