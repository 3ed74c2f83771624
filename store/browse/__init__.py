"""Reading the store for people: listing pages, search, counts, timelines, resemblance."""
