"""``maxy serve``: one HTTP app assembled from its routers (:mod:`.app`), the API keys
(:mod:`.keys`) and how a request's key is read and pinned (:mod:`.auth`), below every router."""
