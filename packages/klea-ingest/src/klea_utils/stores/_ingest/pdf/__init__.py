"""The PDF path: pdfium's text layer, layout, headings, furniture, ligatures, OCR."""
