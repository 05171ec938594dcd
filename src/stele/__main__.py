from stele.entry import main

raise SystemExit(main())
