-- The built-in and glove embedders are static (embed.Static): their
-- semantic list scores the candidates' texts when a search reads them,
-- and no worker stores their vectors any more. Those stored before go;
-- vectors of other models (openai) stay.
DELETE FROM vectors WHERE left(model, 8) = 'builtin-' OR left(model, 6) = 'glove-';
