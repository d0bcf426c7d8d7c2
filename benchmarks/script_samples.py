"""Sample texts of many scripts, for benchmarks/script_factors.py and the estimate's tests.

Every prose sample is the same two paragraphs, written for this project (no outside text):
a short story of a lighthouse keeper and an instruction of the kind a chat prompt carries,
translated by hand into each language. ``code`` is a small Python function with its
docstring, ``json`` a tool-call argument object, ``emoji`` a chat line heavy with emoji,
``symbols`` typographic punctuation, arrows, math signs and a box-drawn file tree,
``fullwidth`` fullwidth and halfwidth forms as Japanese input methods type them, ``mixed``
English with words of other scripts in it. They are modest on purpose (a few
hundred characters each): the ratio of two tokenizers' counts settles quickly, and the
benchmark also measures each sentence alone, where short texts ratio worst.
"""

from __future__ import annotations

SAMPLES: dict[str, str] = {
    "english": (
        "The old lighthouse keeper climbed the stairs every evening at dusk. He wiped the salt "
        "from the lens, lit the lamp, and wrote a short line in his logbook about the weather "
        "and the ships he had seen. One stormy night in November, a small fishing boat lost "
        "its way near the rocks. The keeper rang the bell until his arms ached, and by morning "
        "the crew was safe in the harbour, drinking hot tea by the fire.\n\n"
        "Please summarize the conversation so far, list the open questions, and answer in the "
        "same language as the user. Keep the reply under two hundred words."
    ),
    "code": (
        "def keep_newest(messages: list[dict], budget: int, count) -> list[dict]:\n"
        '    """The newest messages whose tokens fit in `budget`, oldest first."""\n'
        "    kept, used = [], 0\n"
        "    for message in reversed(messages):\n"
        "        cost = count(message['content']) + 4  # role and framing\n"
        "        if used + cost > budget:\n"
        "            break\n"
        "        kept.append(message)\n"
        "        used += cost\n"
        "    return kept[::-1]\n\n"
        "if __name__ == '__main__':\n"
        "    history = [{'role': 'user', 'content': f'message {i}'} for i in range(100)]\n"
        "    print(len(keep_newest(history, 250, lambda s: len(s.split()))))\n"
    ),
    "json": (
        '{"query": "lighthouse keeper logbook November storm", "filters": {"year": 1923, '
        '"harbour": "Port Ellen", "tags": ["weather", "ships", "rescue"]}, "limit": 25, '
        '"include_snippets": true, "sort": {"field": "date", "order": "desc"}, '
        '"session_id": "c0ffee-42-b7e1", "threshold": 0.75}'
    ),
    "german_french": (
        "Der alte Leuchtturmwärter stieg jeden Abend in der Dämmerung die Treppe hinauf. Er "
        "wischte das Salz von der Linse, zündete die Lampe an und schrieb eine kurze Zeile über "
        "das Wetter und die Schiffe in sein Logbuch. Une nuit de tempête, en novembre, un petit "
        "bateau de pêche s'égara près des rochers. Le gardien sonna la cloche jusqu'à ce que ses "
        "bras lui fassent mal, et au matin l'équipage était en sécurité au port.\n\n"
        "Fasse bitte das bisherige Gespräch zusammen und nenne die offenen Fragen. Réponds dans "
        "la même langue que l'utilisateur, en moins de deux cents mots."
    ),
    "vietnamese": (
        "Người gác hải đăng già leo cầu thang mỗi buổi chiều tối. Ông lau muối bám trên thấu "
        "kính, thắp đèn và ghi một dòng ngắn vào sổ nhật ký về thời tiết và những con tàu ông đã "
        "thấy. Vào một đêm giông bão tháng Mười Một, một chiếc thuyền đánh cá nhỏ bị lạc gần "
        "những tảng đá. Người gác rung chuông cho đến khi tay mỏi nhừ, và đến sáng thì thủy thủ "
        "đoàn đã an toàn trong bến cảng, uống trà nóng bên bếp lửa.\n\n"
        "Hãy tóm tắt cuộc trò chuyện cho đến giờ, liệt kê các câu hỏi còn bỏ ngỏ và trả lời "
        "bằng cùng ngôn ngữ với người dùng. Giữ câu trả lời dưới hai trăm từ."
    ),
    "russian": (
        "Старый смотритель маяка каждый вечер в сумерках поднимался по лестнице. Он стирал соль "
        "с линзы, зажигал лампу и записывал в журнал короткую строчку о погоде и о кораблях, "
        "которые видел. Однажды штормовой ноябрьской ночью маленькая рыбацкая лодка сбилась с "
        "пути у скал. Смотритель звонил в колокол, пока у него не заболели руки, и к утру "
        "команда была в безопасности в гавани и пила горячий чай у огня.\n\n"
        "Пожалуйста, кратко перескажи весь разговор, перечисли открытые вопросы и ответь на "
        "том же языке, что и пользователь. Ответ должен быть короче двухсот слов."
    ),
    "ukrainian": (
        "Старий доглядач маяка щовечора в сутінках піднімався сходами. Він витирав сіль з "
        "лінзи, запалював лампу і записував у журнал короткий рядок про погоду та кораблі, які "
        "бачив. Однієї штормової листопадової ночі маленький рибальський човен збився з путі "
        "біля скель. Доглядач бив у дзвін, доки не заболіли руки, і до ранку команда була в "
        "безпеці в гавані.\n\n"
        "Будь ласка, підсумуй розмову, перелічи відкриті питання й відповідай тією ж мовою, що "
        "й користувач. Відповідь має бути коротшою за двісті слів."
    ),
    "greek": (
        "Ο γέρος φαροφύλακας ανέβαινε τις σκάλες κάθε βράδυ το σούρουπο. Σκούπιζε το αλάτι από "
        "τον φακό, άναβε τη λάμπα και έγραφε μια σύντομη γραμμή στο ημερολόγιό του για τον καιρό "
        "και τα πλοία που είχε δει. Μια θυελλώδη νύχτα του Νοεμβρίου, μια μικρή ψαρόβαρκα χάθηκε "
        "κοντά στους βράχους. Ο φύλακας χτυπούσε την καμπάνα ώσπου πόνεσαν τα χέρια του, και ως "
        "το πρωί το πλήρωμα ήταν ασφαλές στο λιμάνι.\n\n"
        "Παρακαλώ συνόψισε τη συζήτηση μέχρι τώρα, απαρίθμησε τις ανοιχτές ερωτήσεις και "
        "απάντησε στην ίδια γλώσσα με τον χρήστη, σε λιγότερες από διακόσιες λέξεις."
    ),
    "arabic": (
        "كان حارس المنارة العجوز يصعد الدرج كل مساء عند الغسق. كان يمسح الملح عن العدسة، "
        "ويشعل المصباح، ويكتب سطرًا قصيرًا في دفتره عن الطقس والسفن التي رآها. وفي ليلة عاصفة "
        "من ليالي نوفمبر، ضلّ قارب صيد صغير طريقه قرب الصخور. قرع الحارس الجرس حتى تعبت "
        "ذراعاه، وفي الصباح كان الطاقم آمنًا في الميناء يشرب الشاي الساخن قرب النار.\n\n"
        "من فضلك لخّص المحادثة حتى الآن، واذكر الأسئلة المفتوحة، وأجب بلغة المستخدم نفسها. "
        "اجعل الرد أقل من مئتي كلمة."
    ),
    "hebrew": (
        "שומר המגדלור הזקן טיפס במדרגות בכל ערב עם רדת החשכה. הוא ניגב את המלח מהעדשה, הדליק "
        "את המנורה וכתב שורה קצרה ביומן על מזג האוויר ועל הספינות שראה. בלילה סוער אחד "
        "בנובמבר, סירת דייגים קטנה תעתה ליד הסלעים. השומר צלצל בפעמון עד שכאבו ידיו, ועד הבוקר "
        "הצוות היה בטוח בנמל.\n\n"
        "אנא סכם את השיחה עד כה, פרט את השאלות הפתוחות וענה באותה שפה של המשתמש, בפחות ממאתיים "
        "מילים."
    ),
    "hindi": (
        "बूढ़ा प्रकाशस्तंभ रक्षक हर शाम ढलते सूरज के साथ सीढ़ियाँ चढ़ता था। वह लेंस से नमक "
        "पोंछता, दीया जलाता और अपनी लॉगबुक में मौसम और देखे गए जहाज़ों के बारे में एक छोटी "
        "पंक्ति लिखता। नवंबर की एक तूफ़ानी रात, मछली पकड़ने वाली एक छोटी नाव चट्टानों के पास "
        "रास्ता भटक गई। रक्षक तब तक घंटी बजाता रहा जब तक उसकी बाँहें दुखने न लगीं, और सुबह "
        "तक नाविक बंदरगाह में सुरक्षित थे।\n\n"
        "कृपया अब तक की बातचीत का सारांश दें, खुले प्रश्नों की सूची बनाएँ और उपयोगकर्ता की "
        "भाषा में ही उत्तर दें। उत्तर दो सौ शब्दों से कम रखें।"
    ),
    "bengali": (
        "বুড়ো বাতিঘর রক্ষক প্রতি সন্ধ্যায় সিঁড়ি বেয়ে উপরে উঠতেন। তিনি লেন্স থেকে লবণ মুছে "
        "প্রদীপ জ্বালাতেন এবং আবহাওয়া ও দেখা জাহাজ নিয়ে খাতায় একটি ছোট লাইন লিখতেন। "
        "নভেম্বরের এক ঝড়ের রাতে একটি ছোট মাছ ধরার নৌকা পাথরের কাছে পথ হারিয়ে ফেলল।\n\n"
        "অনুগ্রহ করে এখন পর্যন্ত কথোপকথনের সারাংশ দিন এবং ব্যবহারকারীর ভাষাতেই উত্তর দিন।"
    ),
    "tamil": (
        "வயதான கலங்கரை விளக்கக் காவலர் ஒவ்வொரு மாலையும் படிக்கட்டுகளில் ஏறினார். அவர் "
        "வில்லையிலிருந்து உப்பைத் துடைத்து, விளக்கை ஏற்றி, வானிலை பற்றி தனது குறிப்பேட்டில் ஒரு "
        "சிறு வரி எழுதினார். நவம்பரில் ஒரு புயல் இரவில், ஒரு சிறிய மீன்பிடி படகு பாறைகளுக்கு "
        "அருகே வழி தவறியது.\n\n"
        "தயவுசெய்து இதுவரையிலான உரையாடலைச் சுருக்கி, பயனரின் மொழியிலேயே பதிலளிக்கவும்."
    ),
    "thai": (
        "ผู้เฝ้าประภาคารชราปีนบันไดขึ้นไปทุกเย็นเมื่อพลบค่ำ เขาเช็ดคราบเกลือออกจากเลนส์ "
        "จุดตะเกียง และเขียนบันทึกสั้น ๆ เกี่ยวกับสภาพอากาศและเรือที่เขาเห็น "
        "คืนหนึ่งในเดือนพฤศจิกายนที่มีพายุ เรือประมงลำเล็กหลงทางใกล้โขดหิน "
        "ผู้เฝ้าตีระฆังจนแขนล้า และเมื่อถึงเช้าลูกเรือก็ปลอดภัยอยู่ในท่าเรือ\n\n"
        "โปรดสรุปบทสนทนาจนถึงตอนนี้ ระบุคำถามที่ยังค้างอยู่ "
        "และตอบเป็นภาษาเดียวกับผู้ใช้ โดยให้คำตอบสั้นกว่าสองร้อยคำ"
    ),
    "chinese": (
        "老灯塔看守人每天黄昏时分都会爬上楼梯。他擦去镜片上的盐，点亮灯，"
        "并在日志里写下一行关于天气和他所见船只的简短记录。十一月的一个暴风雨之夜，"
        "一艘小渔船在礁石附近迷失了方向。看守人一直敲钟，直到手臂酸痛，"
        "到了早晨，船员们已经安全地待在港口里，在火炉旁喝着热茶。\n\n"
        "请总结到目前为止的对话，列出尚未解决的问题，并用与用户相同的语言回答。"
        "回答请控制在两百字以内。"
    ),
    "japanese": (
        "年老いた灯台守は、毎晩夕暮れになると階段を上った。彼はレンズについた塩を拭き取り、"
        "ランプに火をともし、天気と見かけた船について航海日誌に短い一行を書いた。"
        "十一月のある嵐の夜、小さな漁船が岩の近くで道に迷った。灯台守は腕が痛くなるまで鐘を"
        "鳴らし続け、朝には乗組員たちは港で無事に、暖炉のそばで熱いお茶を飲んでいた。\n\n"
        "これまでの会話を要約し、未解決の質問を挙げ、ユーザーと同じ言語で答えてください。"
        "返答は二百語以内にしてください。"
    ),
    "korean": (
        "늙은 등대지기는 매일 저녁 해 질 녘에 계단을 올랐다. 그는 렌즈에 묻은 소금을 닦고, "
        "등불을 켜고, 날씨와 자신이 본 배들에 대해 일지에 짧은 한 줄을 적었다. 11월의 어느 "
        "폭풍우 치는 밤, 작은 고깃배 한 척이 바위 근처에서 길을 잃었다. 등대지기는 팔이 아플 "
        "때까지 종을 울렸고, 아침이 되자 선원들은 항구에서 무사히 난롯가에 앉아 뜨거운 차를 "
        "마시고 있었다.\n\n"
        "지금까지의 대화를 요약하고, 남은 질문을 나열하고, 사용자와 같은 언어로 답해 주세요. "
        "답변은 이백 단어 이내로 해 주세요."
    ),
    "emoji": (
        "Good morning! ☀️🌊 The storm is over 🎉🎉 and the boat is back ⛵⚓. Crew: 👨‍✈️👩‍🔧🧑‍🍳 all "
        "safe ✅. Tea for everyone ☕☕☕ and cake 🍰🍰. Weather tomorrow: 🌤️ → 🌧️ → ⛈️. "
        "Reactions: 👍👍🏽👍🏿❤️😂😮😢🙏 Flags: 🇬🇧🇫🇷🇯🇵🇰🇷🇺🇦 See you later 👋😊🌙✨"
    ),
    "symbols": (
        "“Quoted” — the keeper’s notes… • wind ↑ 40 km/h → storm ⚠ • sea ≥ 4 m ≠ calm • "
        "lamp ★★★☆☆ • tide ≈ 2½ m ± 0.3 • bearing 270° ⇒ west ∴ stay ✔\n"
        "├── log/\n│   ├── 1923-11.txt\n│   └── 1923-12.txt\n└── charts/ ∑ ∫ ∞ √ ∂ ∇ ⊂ ⊆ ∈ ∉\n"
    ),
    "fullwidth": (
        "ＡＰＩキー：ａｂｃ１２３　（全角）　「注意！」　ＯＫ？　ＮＧ！　"
        "１１月３０日（月）　ｈｔｔｐｓ：／／ｅｘａｍｐｌｅ．ｃｏｍ　"
        "ﾊﾝｶｸｶﾀｶﾅ ﾃｷｽﾄ　ｿﾉ２　＃１　＄５０　％８０　＆　＊＊注記＊＊"
    ),
    "mixed": (
        "The keeper (смотритель, 看守人, 灯台守) wrote «шторм» and 暴风雨 in the logbook; the "
        "crew replied 감사합니다 and شكرا, then 🙏. Answer in English unless the user writes "
        "in Ελληνικά or हिन्दी."
    ),
}
"""Each sample's text, by a name that says its script or kind."""
